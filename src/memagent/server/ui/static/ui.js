// memagent ui: the chat (POST + server-sent events, with the model's loading
// state) and small touches. Without JavaScript the chat form posts to /ui/chat.
(function () {
  "use strict";
  function csrf() {
    var m = document.querySelector('meta[name="csrf-token"]');
    return m ? m.getAttribute("content") : "";
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function bubble(side, who, text) {
    var b = el("div", "bubble " + side);
    b.appendChild(el("span", "said-by", who));
    var body = el("span", "body", text || "");
    b.appendChild(body);
    return { node: b, body: body };
  }
  function addSources(list, sources) {
    list.textContent = "";
    (sources || []).forEach(function (s) {
      var li = el("li");
      li.appendChild(el("span", "kind", s.label || "Memory"));
      li.appendChild(document.createTextNode(" "));
      var text = (s.text || "").length > 140 ? s.text.slice(0, 139) + "…" : (s.text || "");
      if (s.href && s.href.indexOf("/ui/") === 0) {
        var a = el("a", "", text);
        a.href = s.href;
        li.appendChild(a);
      } else {
        li.appendChild(document.createTextNode(text));
      }
      list.appendChild(li);
    });
    if (!list.children.length) {
      list.appendChild(el("li", "meta", "No memories were needed for this reply."));
    }
  }

  // -- the model's state: start the load when Chat opens, say how it goes ----------
  var modelReady = null;
  function showModel(state) {
    var box = document.getElementById("model-state");
    if (!box || !state) { return; }
    box.dataset.state = state.state;
    box.className = "model-state state-" + state.state;
    if (state.state === "ready") {
      box.textContent = "Model ready (" + state.model + ").";
    } else if (state.state === "loading" || state.state === "idle") {
      box.textContent = "Loading the model (" + state.model + ")… the first start takes up to a minute; you can type and send meanwhile.";
    } else {
      box.textContent = "The model could not be loaded: " + (state.detail || "unknown error");
    }
  }
  function watchModel() {
    var box = document.getElementById("model-state");
    if (!box || box.dataset.state === "ready" || box.dataset.watching) { return; }
    box.dataset.watching = "1";
    fetch("/ui/chat/model", { method: "POST", credentials: "same-origin",
                              headers: { "X-CSRF-Token": csrf() } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (state) {
        showModel(state);
        if (state && (state.state === "loading" || state.state === "idle")) {
          var timer = setInterval(function () {
            fetch("/ui/chat/model", { credentials: "same-origin" })
              .then(function (r) { return r.ok ? r.json() : null; })
              .then(function (s) {
                showModel(s);
                if (!s || s.state === "ready" || s.state === "failed") { clearInterval(timer); }
              });
          }, 1500);
        }
      });
  }

  function handle(event, data, out) {
    var payload = {};
    try { payload = JSON.parse(data); } catch (e) { return; }
    if (event === "status") {
      out.status.textContent = payload.text || "";
      var mbox = document.getElementById("model-state");
      if (mbox) { mbox.className = "model-state state-loading"; mbox.textContent = payload.text || ""; }
    } else if (event === "delta") {
      if (!out.started) { out.started = true; out.status.textContent = "writing…"; }
      out.reply.textContent += payload.text || "";
    } else if (event === "done") {
      out.reply.textContent = payload.reply || out.reply.textContent;
      out.conversation.value = payload.conversation_id || "";
      addSources(out.sources, payload.sources_shown);
      out.status.textContent = "done";
      var box = document.getElementById("model-state");
      if (box && box.dataset.state !== "ready") {
        fetch("/ui/chat/model", { credentials: "same-origin" })
          .then(function (r) { return r.ok ? r.json() : null; }).then(showModel);
      }
    } else if (event === "error") {
      out.status.textContent = "";
      var detail = payload.detail || "the turn failed";
      if (/ran out of time/.test(detail)) {
        detail += ". The model needed longer than the server allows one reply: the machine may be busy; try again, or ask something shorter";
      }
      out.reply.textContent = "Sorry, that failed: " + detail + ".";
      out.reply.parentNode.classList.add("failed");
    }
  }
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (!form.matches || !form.matches("form[data-chat]")) { return; }
    ev.preventDefault();
    var message = form.querySelector("[name=message]");
    if (!message.value.trim()) { return; }
    var log = document.getElementById("chat-log");
    var empty = document.getElementById("chat-empty");
    if (empty) { empty.remove(); }
    log.appendChild(bubble("me", "You", message.value).node);
    var reply = bubble("them reply", "Assistant", "");
    reply.node.setAttribute("aria-live", "polite");
    reply.body.className = "body typing";
    log.appendChild(reply.node);
    var status = document.getElementById("chat-status");
    var out = { reply: reply.body, status: status, sources: document.getElementById("chat-sources"),
                conversation: form.querySelector("[name=conversation_id]"), started: false };
    status.textContent = "thinking…";
    var body = { message: message.value };
    if (out.conversation.value) { body.conversation_id = out.conversation.value; }
    message.value = "";
    reply.node.scrollIntoView({ block: "nearest" });
    fetch("/ui/chat/stream", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
      body: JSON.stringify(body)
    }).then(function (resp) {
      if (!resp.ok || !resp.body) {
        status.textContent = "";
        reply.body.textContent = "Sorry, that failed (HTTP " + resp.status + "). Reload the page and try again.";
        return;
      }
      var reader = resp.body.getReader(), decoder = new TextDecoder(), buffer = "";
      function pump() {
        return reader.read().then(function (r) {
          if (r.done) { reply.body.classList.remove("typing"); return; }
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
    }).catch(function (e) { status.textContent = "The connection failed: " + e; });
  });
  document.addEventListener("htmx:afterSettle", watchModel);  // Chat reached by a boosted link
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", watchModel);
  } else {
    watchModel();
  }
})();
