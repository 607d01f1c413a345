// memagent ui: stream a chat reply (POST + server-sent events) into the page.
// Without JavaScript the same form posts to /ui/chat and the page shows the reply.
(function () {
  "use strict";
  function csrf() {
    var m = document.querySelector('meta[name="csrf-token"]');
    return m ? m.getAttribute("content") : "";
  }
  function addSources(list, sources) {
    list.textContent = "";
    (sources || []).forEach(function (s) {
      var li = document.createElement("li");
      var label = (s.kind || s.type || "memory") + ": " + (s.content || s.path || s.id || "");
      if (s.id && /^chunk-\d{8}-[0-9a-f]{12}$/.test(s.id)) {
        var a = document.createElement("a");
        a.href = "/ui/memories/" + s.id;
        a.textContent = label;
        li.appendChild(a);
      } else {
        li.textContent = label;
      }
      list.appendChild(li);
    });
    if (!list.children.length) {
      var none = document.createElement("li");
      none.textContent = "no memories used";
      list.appendChild(none);
    }
  }
  function handle(event, data, out) {
    var payload = {};
    try { payload = JSON.parse(data); } catch (e) { return; }
    if (event === "delta") {
      out.reply.textContent += payload.text || "";
    } else if (event === "done") {
      out.reply.textContent = payload.reply || out.reply.textContent;
      out.conversation.value = payload.conversation_id || "";
      addSources(out.sources, payload.memory_sources);
      out.status.textContent = "done";
    } else if (event === "error") {
      out.status.textContent = "error: " + (payload.detail || "the turn failed");
    }
  }
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (!form.matches || !form.matches("form[data-chat]")) { return; }
    ev.preventDefault();
    var message = form.querySelector("[name=message]");
    var log = document.getElementById("chat-log");
    var turn = document.createElement("div");
    turn.className = "turn";
    var you = document.createElement("p");
    you.textContent = "You: " + message.value;
    var reply = document.createElement("p");
    reply.className = "reply";
    reply.setAttribute("aria-live", "polite");
    var status = document.getElementById("chat-status");
    turn.appendChild(you); turn.appendChild(reply); log.appendChild(turn);
    var out = { reply: reply, status: status, sources: document.getElementById("chat-sources"),
                conversation: form.querySelector("[name=conversation_id]") };
    status.textContent = "thinking…";
    var body = { message: message.value };
    if (out.conversation.value) { body.conversation_id = out.conversation.value; }
    message.value = "";
    fetch("/ui/chat/stream", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
      body: JSON.stringify(body)
    }).then(function (resp) {
      if (!resp.ok || !resp.body) { status.textContent = "error: HTTP " + resp.status; return; }
      var reader = resp.body.getReader(), decoder = new TextDecoder(), buffer = "";
      function pump() {
        return reader.read().then(function (r) {
          if (r.done) { return; }
          buffer += decoder.decode(r.value, { stream: true });
          var parts = buffer.split("\n\n");
          buffer = parts.pop();
          parts.forEach(function (block) {
            var event = "message", data = "";
            block.split("\n").forEach(function (line) {
              if (line.indexOf("event: ") === 0) { event = line.slice(7); }
              else if (line.indexOf("data: ") === 0) { data += line.slice(6); }
            });
            handle(event, data, out);
          });
          return pump();
        });
      }
      return pump();
    }).catch(function (e) { status.textContent = "error: " + e; });
  });
})();
