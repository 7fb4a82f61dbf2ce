// The web chat page. Every message's HTML comes sanitised from the server (markdown-it-py + nh3), so this
// script renders no Markdown and trusts no text: it places that HTML, adds copy buttons to code blocks,
// and keeps the connection, the conversation list and the memory view honest about their state.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const log = $("log"), input = $("text"), statusEl = $("status"), activityEl = $("activity");
  const state = { cursor: "", source: null, backoff: 1000, retryTimer: null, liveId: null, thinking: false };
  const unsent = new Map(); // client_message_id -> the bubble of a message not (yet) accepted

  function newId() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return Date.now().toString(36) + Math.random().toString(36).slice(2);
  }

  function setStatus(text, kind) { statusEl.textContent = text; statusEl.dataset.state = kind; }

  async function api(path, options) {
    const response = await fetch(path, Object.assign({ credentials: "same-origin" }, options || {}));
    if (!response.ok) {
      let reason = "HTTP " + response.status;
      try { reason = (await response.json()).detail || reason; } catch (err) { /* keep the status */ }
      const error = new Error(reason);
      error.status = response.status;
      error.retryAfter = response.headers.get("Retry-After");
      throw error;
    }
    return response.json();
  }
  const json = (method, body) => ({ method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

  // --- messages ---------------------------------------------------------------------------------------
  function decorate(el) {
    for (const code of el.querySelectorAll("pre > code")) {
      const pre = code.parentElement;
      if (pre.parentElement.classList.contains("code")) continue;
      const box = document.createElement("div");
      box.className = "code";
      const head = document.createElement("div");
      head.className = "code-head";
      const lang = document.createElement("span");
      const match = /(?:^|\s)language-(\S+)/.exec(code.className);
      lang.textContent = match ? match[1] : "code";
      const copy = document.createElement("button");
      copy.type = "button";
      copy.className = "copy";
      copy.textContent = "Copy";
      copy.setAttribute("aria-label", "Copy the " + lang.textContent + " code");
      copy.addEventListener("click", () => copyText(code.textContent, copy));
      head.append(lang, copy);
      pre.replaceWith(box);
      box.append(head, pre);
    }
  }

  async function copyText(text, button) {
    let done = false;
    try { await navigator.clipboard.writeText(text); done = true; } catch (err) {
      const area = document.createElement("textarea");
      area.value = text; document.body.appendChild(area); area.select();
      try { done = document.execCommand("copy"); } catch (e) { done = false; }
      area.remove();
    }
    button.textContent = done ? "Copied" : "Copy failed";
    setTimeout(() => { button.textContent = "Copy"; }, 2000);
  }

  function bubble(item) {
    const el = document.createElement("div");
    el.dataset.id = item.id;
    fill(el, item);
    return el;
  }

  function fill(el, item) {
    const role = item.role === "user" ? "user" : "assistant";
    const kind = item.kind || "reply";
    el.className = "msg " + role + (kind === "command" ? " command" : "") +
      (kind === "notice" || kind === "ack" ? " notice" : "") + (kind === "error" || kind === "budget" ? " error" : "");
    el.innerHTML = item.html; // sanitised on the server; the page's CSP backs it up
    if (role === "assistant") decorate(el);
  }

  function show(item) {
    const existing = log.querySelector('[data-id="' + CSS.escape(item.id) + '"]');
    const el = existing || bubble(item);
    if (existing) fill(el, item); else log.insertBefore(el, firstUnsent());
    if (item.kind === "stream" && state.thinking) el.classList.add("streaming");
    refreshEmpty();
    scrollDown();
  }

  function firstUnsent() { for (const el of log.children) if (el.dataset.unsent) return el; return null; }
  function scrollDown() { log.scrollTop = log.scrollHeight; }
  function refreshEmpty() { $("empty").hidden = log.children.length > 0; }

  function receive(item) {
    if (item.type === "activity") {
      setActivity(item.state, item.label);
      if (item.state === "done") refreshListSoon();
      return;
    }
    show(item);
    if (["reply", "error", "budget"].includes(item.kind)) setActivity("done");
    if (item.kind !== "stream") refreshListSoon(); // a first message names the conversation
  }

  function refreshListSoon() {
    clearTimeout(state.listTimer);
    state.listTimer = setTimeout(loadConversations, 150);
  }

  // --- the turn's activity ------------------------------------------------------------------------------
  function setActivity(kind, label) {
    state.thinking = kind !== "done";
    activityEl.hidden = !state.thinking;
    if (state.thinking) $("activity-label").textContent = label || "thinking…";
    else for (const el of log.querySelectorAll(".streaming")) el.classList.remove("streaming");
  }

  // --- history and the live stream ----------------------------------------------------------------------
  async function loadHistory() {
    const body = await api("/api/chat/messages");
    log.textContent = "";
    for (const item of body.messages) log.appendChild(bubble(item));
    for (const el of unsent.values()) log.appendChild(el);
    state.cursor = body.cursor;
    state.liveId = body.conversation_id;
    refreshEmpty();
    scrollDown();
  }

  function connect() {
    clearTimeout(state.retryTimer);
    if (state.source) state.source.close();
    const source = new EventSource("/api/chat/stream?after=" + encodeURIComponent(state.cursor));
    state.source = source;
    source.onopen = () => { state.backoff = 1000; setStatus("connected", "connected"); };
    source.onmessage = (event) => {
      state.cursor = event.lastEventId || state.cursor;
      receive(JSON.parse(event.data));
    };
    // Our own backoff instead of the browser's fixed retry: 1, 2, 4 … 15 s, and the history is read again
    // on the way back, so nothing delivered while we were away (or by a restarted server) is missed.
    source.onerror = () => { source.close(); reconnectLater(); };
  }

  function reconnectLater() {
    const wait = state.backoff;
    state.backoff = Math.min(state.backoff * 2, 15000);
    setStatus("disconnected — reconnecting in " + Math.round(wait / 1000) + " s…", "disconnected");
    state.retryTimer = setTimeout(start, wait);
  }

  async function start() {
    setStatus(state.source ? "reconnecting…" : "connecting…", "connecting");
    try {
      await loadHistory();
    } catch (err) {
      reconnectLater();
      return;
    }
    connect();
    loadConversations();
  }

  // --- sending ----------------------------------------------------------------------------------------
  function localBubble(text, clientId) {
    const el = bubble({ id: "local-" + clientId, role: "user", kind: text.startsWith("/") ? "command" : "message", html: "" });
    el.textContent = text;
    el.dataset.unsent = "1";
    el.classList.add("pending");
    unsent.set(clientId, el);
    log.appendChild(el);
    refreshEmpty();
    scrollDown();
    return el;
  }

  async function send(text, clientId) {
    const id = clientId || newId();
    const el = unsent.get(id) || localBubble(text, id);
    el.classList.add("pending");
    el.classList.remove("failed");
    const note = el.querySelector(".send-state");
    if (note) note.remove();
    try {
      await api("/api/chat/messages", json("POST", { text: text, client_message_id: id }));
    } catch (err) {
      return failed(el, text, id, err);
    }
    unsent.delete(id);
    delete el.dataset.unsent;
    el.classList.remove("pending");
    if (!text.startsWith("/")) setActivity("thinking", "thinking…");
    else if (["/stop", "/new", "/reset"].includes(text.trim())) setActivity("done");
    if (text.trim() === "/new") await afterNew(); // the command ran before the POST was answered
  }

  function failed(el, text, id, err) {
    el.classList.remove("pending");
    el.classList.add("failed");
    const note = document.createElement("span");
    note.className = "send-state";
    note.setAttribute("role", "alert");
    const reason = err.status ? err.message : "the gateway could not be reached";
    const wait = err.retryAfter ? " (you can retry in " + err.retryAfter + " s)" : "";
    note.textContent = "Not sent — " + reason + wait + ".";
    const retry = document.createElement("button");
    retry.type = "button";
    retry.className = "retry";
    retry.textContent = "Retry";
    retry.addEventListener("click", () => send(text, id));
    note.appendChild(retry);
    el.appendChild(note);
  }

  async function afterNew() { await loadHistory(); loadConversations(); }

  // --- conversations ----------------------------------------------------------------------------------
  function ago(seconds) {
    const d = Date.now() / 1000 - seconds;
    if (d < 60) return "just now";
    if (d < 3600) return Math.floor(d / 60) + " min ago";
    if (d < 86400) return Math.floor(d / 3600) + " h ago";
    return new Date(seconds * 1000).toLocaleDateString();
  }

  async function loadConversations() {
    if (state.renaming) return;
    let body;
    try { body = await api("/api/chat/conversations"); } catch (err) { return; }
    const list = $("conversations");
    list.textContent = "";
    for (const c of body.conversations) {
      const li = document.createElement("li");
      li.dataset.id = c.id;
      if (c.live) { li.setAttribute("aria-current", "true"); $("title").textContent = c.title; }
      const open = document.createElement("button");
      open.type = "button";
      open.className = "open";
      const name = document.createElement("span");
      name.textContent = c.title;
      const when = document.createElement("small");
      when.textContent = (c.live ? "current · " : "") + ago(c.last_active_at);
      open.append(name, when);
      open.addEventListener("click", () => openConversation(c));
      const rename = document.createElement("button");
      rename.type = "button";
      rename.className = "icon rename";
      rename.textContent = "✎";
      rename.setAttribute("aria-label", "Rename “" + c.title + "”");
      rename.addEventListener("click", () => startRename(li, c));
      li.append(open, rename);
      list.appendChild(li);
    }
    if (!body.conversations.some((c) => c.live)) $("title").textContent = "New chat";
  }

  async function openConversation(c) {
    closeSidebar();
    if (c.live) return;
    try { await api("/api/chat/conversations/" + encodeURIComponent(c.id) + "/open", { method: "POST" }); }
    catch (err) { setStatus("could not open it: " + err.message, "disconnected"); return; }
    setActivity("done");
    await loadHistory();
    await loadConversations();
    input.focus();
  }

  function startRename(li, c) {
    state.renaming = true;
    const done = () => { state.renaming = false; loadConversations(); };
    const field = document.createElement("input");
    field.value = c.title;
    field.setAttribute("aria-label", "New name");
    li.replaceChildren(field);
    field.focus();
    field.select();
    let saving = false;
    field.addEventListener("keydown", async (event) => {
      if (event.key === "Escape") return done();
      if (event.key !== "Enter") return;
      saving = true;
      try { await api("/api/chat/conversations/" + encodeURIComponent(c.id), json("PATCH", { title: field.value })); }
      catch (err) { setStatus("could not rename it: " + err.message, "disconnected"); }
      finally { done(); }
    });
    field.addEventListener("blur", () => { if (!saving) done(); });
  }

  async function search(query) {
    const box = $("search-results");
    const seq = (state.searchSeq = (state.searchSeq || 0) + 1); // only the newest search shows
    box.textContent = "";
    box.hidden = !query;
    if (!query) return;
    let body;
    try { body = await api("/api/chat/search?q=" + encodeURIComponent(query)); }
    catch (err) { if (seq === state.searchSeq) box.textContent = "Search failed: " + err.message; return; }
    if (seq !== state.searchSeq) return;
    box.textContent = "";
    if (!body.results.length) { box.textContent = "Nothing found for “" + query + "”."; return; }
    for (const r of body.results) {
      const hit = document.createElement("button");
      hit.type = "button";
      const name = document.createElement("strong");
      name.textContent = r.title;
      const excerpt = document.createElement("small");
      excerpt.textContent = (r.excerpts[0] || "").slice(0, 160);
      hit.append(name, excerpt);
      hit.addEventListener("click", () => openConversation(r));
      box.appendChild(hit);
    }
  }

  // --- what I remember about you -------------------------------------------------------------------------
  async function loadMemory() {
    const body = $("memory-body");
    let data;
    try { data = await api("/api/chat/memory"); }
    catch (err) { body.textContent = "Could not load your memory: " + err.message; return; }
    body.textContent = "";
    if (!data.stores.length) { body.textContent = "I don't remember anything about you yet."; return; }
    for (const store of data.stores) body.appendChild(storeView(store));
  }

  function storeView(store) {
    const section = document.createElement("section");
    section.className = "store";
    const title = document.createElement("h3");
    title.textContent = store.label;
    const meter = document.createElement("meter");
    meter.min = 0; meter.max = store.limit; meter.value = store.used; meter.high = store.limit * 0.8;
    meter.setAttribute("aria-label", store.label + " usage");
    const usage = document.createElement("div");
    usage.className = "usage";
    usage.textContent = store.used + " / " + store.limit + " characters (" + store.percent + "%)";
    const list = document.createElement("ul");
    if (!store.entries.length) { const li = document.createElement("li"); li.textContent = "Nothing yet."; list.appendChild(li); }
    for (const entry of store.entries) list.appendChild(entryView(store.target, entry));
    section.append(title, meter, usage, list);
    return section;
  }

  function entryView(target, entry) {
    const li = document.createElement("li");
    const text = document.createElement("p");
    text.textContent = entry;
    const actions = document.createElement("div");
    actions.className = "actions";
    const edit = document.createElement("button");
    edit.type = "button"; edit.className = "secondary edit"; edit.textContent = "Edit";
    const remove = document.createElement("button");
    remove.type = "button"; remove.className = "secondary delete"; remove.textContent = "Delete";
    const problem = document.createElement("div");
    problem.className = "problem";
    problem.setAttribute("role", "alert");
    remove.addEventListener("click", async () => {
      if (remove.dataset.armed !== "1") {
        remove.dataset.armed = "1"; remove.textContent = "Really delete?";
        setTimeout(() => { remove.dataset.armed = ""; remove.textContent = "Delete"; }, 4000);
        return;
      }
      try { await api("/api/chat/memory/forget", json("POST", { target: target, entry: entry })); loadMemory(); }
      catch (err) { problem.textContent = err.message; }
    });
    edit.addEventListener("click", () => {
      const area = document.createElement("textarea");
      area.value = entry;
      area.setAttribute("aria-label", "Edit this entry");
      const save = document.createElement("button");
      save.type = "button"; save.textContent = "Save";
      const cancel = document.createElement("button");
      cancel.type = "button"; cancel.className = "secondary"; cancel.textContent = "Cancel";
      save.addEventListener("click", async () => {
        try { await api("/api/chat/memory/rewrite", json("POST", { target: target, entry: entry, content: area.value })); loadMemory(); }
        catch (err) { problem.textContent = err.message; }
      });
      cancel.addEventListener("click", loadMemory);
      text.replaceWith(area);
      actions.replaceChildren(save, cancel);
      area.focus();
    });
    actions.append(edit, remove);
    li.append(text, actions, problem);
    return li;
  }

  // --- wiring -----------------------------------------------------------------------------------------
  function closeSidebar() { $("sidebar").classList.remove("open"); $("open-side").setAttribute("aria-expanded", "false"); }

  document.addEventListener("DOMContentLoaded", () => {
    $("composer").addEventListener("submit", (event) => {
      event.preventDefault();
      const text = input.value.trim();
      if (!text) return;
      input.value = "";
      send(text);
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        $("composer").requestSubmit();
      }
    });
    $("stop").addEventListener("click", () => send("/stop"));
    $("new-chat").addEventListener("click", () => {
      closeSidebar();
      if (log.querySelector(".msg")) send("/new");
      input.focus();
    });
    $("search-form").addEventListener("submit", (event) => { event.preventDefault(); search($("search").value.trim()); });
    $("search").addEventListener("search", () => { if (!$("search").value) search(""); });
    $("memory-open").addEventListener("click", () => { closeSidebar(); $("memory").showModal(); loadMemory(); });
    $("memory-close").addEventListener("click", () => $("memory").close());
    $("open-side").addEventListener("click", () => {
      $("sidebar").classList.add("open"); $("open-side").setAttribute("aria-expanded", "true"); $("new-chat").focus();
    });
    $("close-side").addEventListener("click", closeSidebar);
    document.addEventListener("keydown", (event) => { if (event.key === "Escape") closeSidebar(); });
    start();
  });
})();
