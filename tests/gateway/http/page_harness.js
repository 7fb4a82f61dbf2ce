// Runs the web chat page's script in Node with a scripted network, and prints the status line it shows.
// Usage: node page_harness.js PAGE.html SCENARIO.json  ->  one JSON object: {"statuses": [...]}
"use strict";
const fs = require("fs");
const vm = require("vm");

const html = fs.readFileSync(process.argv[2], "utf8");
const scenario = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const script = html.slice(html.indexOf("<script>") + "<script>".length, html.lastIndexOf("</script>"));

const statuses = [];
function element(id) {
  const el = {
    id, dataset: {}, children: [], value: "", classList: { add() {}, remove() {} },
    appendChild(child) { this.children.push(child); }, addEventListener() {}, requestSubmit() {},
  };
  let text = "";
  Object.defineProperty(el, "textContent", {
    get: () => text,
    set: (value) => { text = String(value); if (id === "status") statuses.push(text); },
  });
  return el;
}
const elements = {};
const document = {
  getElementById: (id) => (elements[id] = elements[id] || element(id)),
  createElement: () => element(""),
};

// The network: each fetch takes the next scripted answer ("ok" with a JSON body, or "down").
const answers = scenario.fetches.slice();
let fetches = 0;
function fetch() {
  fetches += 1;
  const next = answers.shift() || { kind: "down" };
  if (next.kind === "down") return Promise.reject(new TypeError("Failed to fetch"));
  return Promise.resolve({ ok: true, status: 200, json: () => Promise.resolve(next.body), headers: { get: () => null } });
}

class EventSource {
  constructor(url) { this.url = url; this.readyState = EventSource.CONNECTING; sources.push(this); }
  close() { this.readyState = EventSource.CLOSED; }
}
EventSource.CONNECTING = 0; EventSource.OPEN = 1; EventSource.CLOSED = 2;
const sources = [];

// Timers run at once, a bounded number of times, so a retry loop ends when the script runs out.
let timers = 0;
function setTimeout(callback) { if (++timers < 20) Promise.resolve().then(callback); }

const context = { document, fetch, EventSource, setTimeout, window: {}, crypto: undefined, console, Date, Math, JSON, Promise, Error, TypeError };
context.window = context;
vm.createContext(context);
vm.runInContext(script, context);

async function settle() { for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve)); }

(async () => {
  await settle();
  for (const step of scenario.events) {
    const source = sources[sources.length - 1];
    if (step === "open") { source.readyState = EventSource.OPEN; source.onopen(); }
    if (step === "error") { source.readyState = EventSource.CONNECTING; source.onerror(); }
    if (step === "give-up") { source.readyState = EventSource.CLOSED; source.onerror(); }
    statuses.push("|" + step);
    await settle();
  }
  process.stdout.write(JSON.stringify({ statuses, fetches }));
})();
