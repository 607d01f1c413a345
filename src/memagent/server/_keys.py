"""API keys (see `memagent.memory.keys`: files; `memagent.postgres.keys`: the database)."""

from memagent.memory.keys import USER_RE, ApiKey, Keys, KeyStore, validate_user

__all__ = ["USER_RE", "ApiKey", "KeyStore", "Keys", "validate_user"]
