from memagent.cli import main

main()
