// The studio's keyboard and prefetch layer. Loaded once per page via launch(js=...).
// A rating key becomes a command (an id made here, the candidate on screen when pressed and
// that view's token), kept in localStorage until the server acknowledges it: a dropped
// connection, a reload, a restart or a new login sends it again, and the server applies
// each command id once (curation/commands.py). Other keys click hidden Gradio buttons; their
// `js` hooks send what was captured. Keys are sent one at a time, in the order pressed.
() => {
  if (window.rp) return;
  const rp = (window.rp = { busy: false, nonce: null, sel: new Set(), lastTile: null,
                             preloaded: [], gridTier: "" });
  const $ = (id) => document.getElementById(id);
  const btn = (id) => { const el = $(id); return el && (el.tagName === "BUTTON" ? el : el.querySelector("button")); };
  const view = () => $("rp-view");
  const visible = (el) => !!el && el.offsetParent !== null;
  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

  rp.cid = () => { const v = view(); return v && v.dataset.cid ? Number(v.dataset.cid) : null; };
  // Keys wait in an ordered queue and are sent one at a time. Each is bound to the painting
  // on screen when it was pressed (the server's view, or the next one shown at once from the
  // prefetched chain). When the page cannot know what comes next (the chain is used up, or
  // after an undo or a jump) nothing is shown, and a key pressed then is not applied.
  rp.queue = [];      // keys not sent yet, in the order pressed
  rp.inflight = null; // the key whose reply is awaited
  rp.sent = { cid: null, seen: -1, tier: "", note: "", delta: 0, goto: 0 };
  rp.shown = null;    // {cid, url, seen, token} on screen now (seen -1: shown ahead); null: none
  rp.failure = null;  // why the last send failed (the page stops advancing until one succeeds)
  rp.notApplied = 0;  // keys pressed while no painting was shown, since one last was
  const tokens = () => {
    const v = view(), out = {};
    ((v && v.dataset.tokens) || "").split(" ").filter(Boolean).forEach((p) => {
      const i = p.indexOf(":"); out[p.slice(0, i)] = p.slice(i + 1);
    });
    return out;
  };
  const server = () => {
    const v = view();
    if (!v || !v.dataset.cid) return null;
    return { cid: Number(v.dataset.cid), url: v.dataset.url || null, seen: Number(v.dataset.seen || 0),
             token: tokens()[v.dataset.cid] || "" };
  };
  const chain = () => {
    const v = view(), t = tokens();
    return ((v && v.dataset.chain) || "").split(" ").filter(Boolean).map((p) => {
      const i = p.indexOf("|"), cid = p.slice(0, i);
      return { cid: Number(cid), url: p.slice(i + 1), seen: -1, token: t[cid] || "" };
    });
  };
  const nextAfter = (cid) => {  // where a rating of `cid` will advance to, if the page knows
    const c = chain();
    if (cid === rp.cid()) return c[0] || null;
    const at = c.findIndex((x) => x.cid === cid);
    return at >= 0 ? c[at + 1] || null : null;
  };
  const neighbour = (cid, delta) => {
    const v = view(), name = delta > 0 ? "fwd" : "back";
    if (!v || cid !== rp.cid() || !v.dataset[name + "Cid"]) return null;
    const id = v.dataset[name + "Cid"];
    return { cid: Number(id), url: v.dataset[name + "Url"], seen: -1, token: tokens()[id] || "" };
  };
  // What is on screen once key `e` has been applied; null: unknown until the server says.
  const after = (e) => {
    if (e.kind === "rate") return nextAfter(e.cid);
    if (e.kind === "nav") return neighbour(e.cid, e.delta);
    if (e.kind === "note") return { ...e.at, seen: -1 };
    return null;  // undo, jump: the server decides
  };
  // What the screen shows after every queued key, starting from the server's view.
  const plan = () => {
    let cur = server();
    for (const e of rp.inflight ? [rp.inflight, ...rp.queue] : rp.queue) cur = cur && after(e);
    return rp.failure ? null : cur;
  };
  const display = (cur) => {
    const v = view(), im = $("rp-img");
    if (!v) return null;
    v.classList.remove("rp-optimistic", "rp-waiting");
    const s = server();
    const isImg = im && im.tagName === "IMG";
    if (cur && s && cur.cid === s.cid) {
      if (isImg && s.url && im.getAttribute("src") !== s.url) im.src = s.url;
      if (im) im.dataset.cid = String(s.cid);
      return cur;
    }
    if (cur && cur.url && isImg) {
      im.src = cur.url;
      im.dataset.cid = String(cur.cid);
      v.classList.add("rp-optimistic");
      return cur;
    }
    if (im) im.dataset.cid = "";  // nothing the curator could rate is on screen
    v.classList.add("rp-waiting");
    return null;
  };
  const refresh = () => {
    rp.shown = display(plan());
    rp.pump();
    status();
  };
  const noteBox = () => document.querySelector("#rp-note textarea, #rp-note input");
  const takeNote = () => {
    // The note goes with this key; empty the box now so a later key does not send it again.
    const box = noteBox();
    const text = box ? box.value : "";
    if (box && text) { box.value = ""; box.dispatchEvent(new Event("input", { bubbles: true })); }
    return text;
  };
  // A note the server did not take goes back into the box, unless the curator is typing there.
  const giveNoteBack = (text) => {
    const box = noteBox();
    if (!text || !box || document.activeElement === box) return;
    box.value = box.value ? `${text} ${box.value}` : text;
    box.dispatchEvent(new Event("input", { bubbles: true }));
  };
  const say = (text, level = "info") => {
    const msg = view() && view().querySelector(".rp-msg");
    if (msg) { msg.className = `rp-msg rp-${level}`; msg.textContent = text; }
  };

  // -- the outbox: rating commands kept in localStorage until the server acknowledges them --
  const BOX = "rp-outbox", ALIVE = "rp-alive";
  rp.tab = sessionStorage.getItem("rp-tab") || Math.random().toString(36).slice(2);
  sessionStorage.setItem("rp-tab", rp.tab);  // a reload is the same tab: it owns its commands
  const read = (k, empty) => { try { return JSON.parse(localStorage.getItem(k)) || empty; } catch { return empty; } };
  const write = (k, v) => { try { localStorage.setItem(k, JSON.stringify(v)); } catch { /* full */ } };
  rp.box = () => read(BOX, []);
  const keep = (cmd) => write(BOX, [...rp.box().filter((c) => c.id !== cmd.id), cmd]);
  const ack = (id) => write(BOX, rp.box().filter((c) => c.id !== id));
  const newId = () => (crypto.randomUUID ? crypto.randomUUID()  // not on plain-http hosts
    : Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join(""));
  const curator = () => (view() && view().dataset.curator) || "";
  // Each page says it is alive; a command whose page is gone (closed, crashed) is adopted.
  const beat = () => {
    const alive = read(ALIVE, {}), now = Date.now();
    for (const t of Object.keys(alive)) if (now - alive[t] > 10000) delete alive[t];
    alive[rp.tab] = now;
    write(ALIVE, alive);
  };
  const orphan = (c) => { const at = read(ALIVE, {})[c.tab]; return c.tab === rp.tab || !at || Date.now() - at > 5000; };
  rp.unsaved = () => rp.box().filter((c) => c.tab === rp.tab).length;
  // Send again what this page (before a reload) or a closed one left unsaved, oldest first.
  const replay = () => {
    const who = curator(), queued = new Set(rp.queue.filter((e) => e.cmd).map((e) => e.cmd.id));
    if (rp.inflight && rp.inflight.cmd) queued.add(rp.inflight.cmd.id);
    const mine = rp.box().filter((c) => c.curator === who && !queued.has(c.id) && orphan(c));
    mine.sort((a, b) => a.at - b.at).forEach((c) => { c.tab = rp.tab; keep(c); });
    rp.queue.unshift(...mine.map((c) => ({ kind: "rate", cmd: c, cid: c.cid })));
  };
  const bar = () => $("rp-outbox") || document.body.appendChild(Object.assign(document.createElement("div"), {
    id: "rp-outbox", role: "status", style: "position:fixed;right:12px;bottom:12px;z-index:20;max-width:46em;"
      + "padding:6px 12px;border-radius:6px;background:#fff4e5;color:#8a4b00;box-shadow:0 1px 6px rgba(0,0,0,.2)" }));
  const REASONS = {
    login: "Log in again: the studio no longer accepts this page's login (it restarted, or you logged out). Reload the page to log in; your unsaved ratings are sent after you do.",
    offline: "The studio is unreachable: no answer from the server. Your unsaved ratings stay in this browser and are sent when it answers (retrying every few seconds).",
    server: "The studio failed to answer (HTTP {status}). Your unsaved ratings stay in this browser and are sent when it answers (retrying every few seconds).",
  };
  // The status corner: unsaved ratings, why sending stopped, keys that were not applied.
  const status = () => {
    const n = rp.unsaved(), parts = [];
    if (n) parts.push(`${plural(n, "rating", "ratings")} unsaved.`);
    if (rp.failure) parts.push(REASONS[rp.failure.kind].replace("{status}", rp.failure.status));
    if (rp.notApplied) parts.push(`${plural(rp.notApplied, "key was", "keys were")} not applied: no painting was on screen when pressed (waiting for the next one). Press again once it shows.`);
    const el = bar();
    Object.assign(el, { textContent: parts.join(" "), hidden: !parts.length });
    el.dataset.unsaved = String(n);
  };
  window.addEventListener("beforeunload", (e) => {
    if (rp.unsaved()) { e.preventDefault(); e.returnValue = ""; }  // "leave page?": some are unsaved
  });
  const api = (name) => new URL(`gradio_api/run/${name}`, location.origin + location.pathname.replace(/[^/]*$/, ""));
  // POST one command; the reply is the next view, which says what became of it.
  const send = async (e) => {
    const c = e.cmd, body = { id: c.id, cid: c.cid, tier: c.tier, note: c.note, seen: c.seen, token: c.token };
    let reply;
    try {
      const r = await fetch(api("rate"), { method: "POST", credentials: "same-origin",
        signal: AbortSignal.timeout ? AbortSignal.timeout(15000) : undefined,
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ data: [JSON.stringify(body), c.curator], session_hash: window.__gradio_session_hash__ }) });
      if (r.status === 401 || r.status === 403) return failed(e, { kind: "login" });
      if (!r.ok) return failed(e, { kind: "server", status: r.status });
      reply = (await r.json()).data[0];
    } catch (err) {
      return failed(e, { kind: "offline" });
    }
    ack(c.id);
    rp.failure = null;
    show(reply);
    answered(e);
  };
  // Not sent: the command stays in the outbox and first in line; nothing advances meanwhile.
  const failed = (e, why) => {
    rp.failure = why;
    rp.queue.unshift(e);
    rp.inflight = null;
    rp.busy = false;
    clearTimeout(rp.retry);  // set first: refresh() must not send it again at once
    rp.retry = setTimeout(() => { rp.retry = null; rp.pump(); }, why.kind === "login" ? 5000 : 1500);
    refresh();
    say(`Not saved yet: ${REASONS[why.kind].replace("{status}", why.status)}`, "error");
  };
  // Put a reply into the view in place (Gradio's component keeps its own last value: if it
  // redraws that older one, onView puts the newest back).
  const show = (html) => {
    const v = view(), t = document.createElement("template");
    t.innerHTML = String(html || "").trim();
    const nv = t.content.firstElementChild;
    if (!v || !nv || nv.id !== "rp-view") return;
    rp.latest = html;
    for (const a of Array.from(v.attributes)) v.removeAttribute(a.name);
    for (const a of Array.from(nv.attributes)) v.setAttribute(a.name, a.value);
    v.replaceChildren(...Array.from(nv.childNodes));
  };
  // A reply is on screen (a command's, or a Gradio button's for key `e`): go on, or stop.
  const answered = (e) => {
    const v = view();
    if (!v) return;
    rp.nonce = v.dataset.nonce;
    rp.top = BigInt(v.dataset.nonce || 0);
    rp.latest = v.outerHTML;
    fit();
    if (e && e === rp.inflight) { rp.inflight = null; rp.busy = false; }
    rp.preload((v.dataset.prefetch || "").split(" ").filter(Boolean));
    const refused = v.dataset.level === "error" || v.dataset.error;
    if (e && e.kind === "note" && (refused || v.dataset.level === "info")) giveNoteBack(e.note);
    if (!refused) { refresh(); return; }
    // the reply says what went wrong (or that the key was refused): keys pressed after it
    // were meant for what would have come next, so they are dropped, and the view says so
    if (e && e.cmd) giveNoteBack(e.cmd.note);
    const dropped = rp.queue.length;
    rp.queue.forEach((q) => q.cmd && ack(q.cmd.id));
    rp.queue = [];
    if (dropped) {
      const msg = v.querySelector(".rp-msg");
      if (msg) msg.textContent += ` (${plural(dropped, "key", "keys")} pressed after it ${dropped > 1 ? "were" : "was"} not applied)`;
    }
    refresh();
  };
  rp.pump = () => {
    if (rp.inflight || rp.retry || !rp.queue.length) return;
    const e = (rp.inflight = rp.queue.shift());
    rp.busy = true;
    rp.busyAt = performance.now();
    if (e.cmd) { send(e); return; }
    const b = btn(e.id);
    if (!b) { rp.inflight = null; rp.busy = false; rp.pump(); return; }
    rp.sent = e;
    b.click();
  };
  // A key: bound now to the painting on screen, then the screen moves on. With none on
  // screen (waiting for the server, or it failed) the key is not applied, and the page says so.
  rp.push = (entry) => {
    if (entry.needsCid) {
      const s = rp.shown;
      if (!s) {
        rp.notApplied += 1;
        say(`${plural(rp.notApplied, "key", "keys")} not applied: no painting was on screen.`, "warn");
        status();
        return false;
      }
      Object.assign(entry, { cid: s.cid, seen: s.seen, url: s.url, at: s });
      rp.notApplied = 0;  // the count is of keys since the last one applied
    }
    rp.queue.push(entry);
    refresh();
    return true;
  };
  rp.act = (tier) => {
    const s = rp.shown;
    if (!s) return rp.push({ needsCid: true });  // counted, not applied
    const cmd = { id: newId(), curator: curator(), cid: s.cid, tier, note: takeNote(), seen: s.seen,
                  token: s.token, tab: rp.tab, at: Date.now() };
    keep(cmd);  // in localStorage before anything is sent
    rp.push({ kind: "rate", needsCid: true, cmd });
    say(`Saving ${tier} for #${cmd.cid}…`);
  };
  rp.undo = () => rp.push({ id: "rp-undo-btn", kind: "undo" });
  rp.nav = (delta) => rp.push({ id: "rp-nav-btn", kind: "nav", needsCid: true, cid: null, delta });
  rp.jump = (cid) => rp.push({ id: "rp-goto-btn", kind: "goto", goto: cid });
  rp.saveNote = () => rp.push({ id: "rp-note-btn", kind: "note", needsCid: true, cid: null, note: takeNote() });
  rp.gridRate = (tier) => { rp.gridTier = tier; const b = btn("rp-grid-rate-btn"); b && b.click(); };
  rp.gridUndo = () => { const b = btn("rp-grid-undo-btn"); b && b.click(); };
  rp.selected = () => Array.from(rp.sel).join(",");

  rp.preload = (urls) => {
    // Keep references so the decoded images stay in the memory cache.
    rp.preloaded = urls.map((u) => {
      const im = new Image();
      im.src = u;
      im.decode().catch(() => {});  // decode now, off the keypress path
      return im;
    });
  };
  const onView = () => {
    const v = view();
    if (!v || v.dataset.nonce === rp.nonce) return;
    if (rp.top && rp.latest && BigInt(v.dataset.nonce || 0) < rp.top) {
      show(rp.latest);  // Gradio redrew its older value: the newest view goes back
      rp.nonce = view().dataset.nonce;
      refresh();
      return;
    }
    if (!rp.started && v.dataset.curator) { rp.started = true; replay(); }
    answered(rp.inflight && !rp.inflight.cmd ? rp.inflight : null);  // a Gradio reply
  };
  const onGrid = () => {
    const g = $("rp-grid");
    if (g && g.dataset.seen !== "1") { g.dataset.seen = "1"; rp.sel.clear(); rp.lastTile = null; }
  };
  // Size the painting to the height left below its top (at most its own 600 px), so it and
  // its photo show whole without scrolling, filters open or not (see studio.css --rp-fit).
  const fit = () => {
    const main = view() && view().querySelector(".rp-main");
    if (!main || !visible(main)) return;
    const top = main.getBoundingClientRect().top + window.scrollY;
    const px = Math.max(160, Math.min(600, Math.floor(window.innerHeight - top - 12)));
    const root = document.documentElement;
    if (root.style.getPropertyValue("--rp-fit") !== `${px}px`) root.style.setProperty("--rp-fit", `${px}px`);
  };
  window.addEventListener("resize", fit);
  new ResizeObserver(fit).observe(document.body);  // the filters opening, a tab shown
  // Views are taken as drawn, and caught up with now and before each key (one drawn before this ran).
  const catchUp = () => { onView(); onGrid(); };
  new MutationObserver(catchUp).observe(document.body, { childList: true, subtree: true });
  catchUp();
  // A button's lost response (network hiccup) must not freeze the keyboard forever (a
  // command's own request times out and is sent again).
  setInterval(() => {
    beat(); catchUp();
    const e = rp.inflight;
    if (e && !e.cmd && performance.now() - rp.busyAt > 8000) { rp.inflight = null; rp.busy = false; rp.pump(); }
  }, 1000);
  beat();

  // The rating keys come from the page's rate bar (studio/ui.py), so the tiers are named once.
  const rateKey = (k) => Array.from(document.querySelectorAll("[data-rp-key]"))
    .find((b) => b.dataset.rpKey.split(" ").includes(k === " " ? "space" : k));
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    const typing = t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable);
    const inNote = t && t.closest && t.closest("#rp-note");
    if (typing) {
      if (inNote && e.key === "Enter" && !e.shiftKey) { e.preventDefault(); t.blur(); rp.saveNote(); }
      else if (inNote && e.key === "Escape") { t.blur(); }
      return;
    }
    if (!visible(view()) || e.altKey || e.metaKey) return;
    catchUp();
    const k = e.key.toLowerCase();
    const ctrl = e.ctrlKey;
    let act = null;
    if (ctrl && k === "z") act = rp.undo;
    else if (ctrl) act = null;
    else if (rateKey(k)) act = () => rp.act(rateKey(k).dataset.rpAct);
    else if (k === "z") act = rp.undo;
    else if (k === "n") act = () => { const box = noteBox(); box && box.focus(); };
    else if (k === "arrowright" || k === "j") act = () => rp.nav(1);
    else if (k === "arrowleft" || k === "k") act = () => rp.nav(-1);
    if (!act) return;
    e.preventDefault();
    if (!e.repeat) act();  // a held key repeats: one press is one action
  });

  // Keep ?curator= in the address bar in step with the name box, so a reload resumes as them.
  document.addEventListener("change", (e) => {
    const box = e.target.closest && e.target.closest("#rp-curator");
    if (!box || !e.target.value) return;
    const u = new URL(location.href);
    u.searchParams.set("curator", e.target.value.trim());
    history.replaceState(null, "", u);
  });

  // Our buttons never take focus: Enter after clicking one must not press it again.
  document.addEventListener("mousedown", (e) => {
    if (e.target.closest && e.target.closest("[data-rp-act],[data-rp-grid]")) e.preventDefault();
  });

  document.addEventListener("click", (e) => {
    const a = e.target.closest && e.target.closest("[data-rp-act],[data-rp-goto],[data-rp-grid],.rp-tile");
    if (!a) return;
    a.blur();  // so a later Enter does not press it again
    if (a.dataset.rpAct) { e.preventDefault(); rp[a.dataset.rpAct === "undo" ? "undo" : "act"](a.dataset.rpAct); }
    else if (a.dataset.rpGoto) { e.preventDefault(); rp.jump(Number(a.dataset.rpGoto)); }
    else if (a.dataset.rpGrid) {
      e.preventDefault();
      const g = a.dataset.rpGrid;
      if (g === "all") document.querySelectorAll(".rp-tile").forEach((t) => { rp.sel.add(Number(t.dataset.cid)); t.classList.add("rp-sel"); });
      else if (g === "none") { rp.sel.clear(); document.querySelectorAll(".rp-tile").forEach((t) => t.classList.remove("rp-sel")); }
      else if (g === "undo") rp.gridUndo();
      else rp.gridRate(g);
    } else {
      // a grid tile: toggle, or shift-click to select a range
      const tiles = Array.from(document.querySelectorAll(".rp-tile"));
      const i = tiles.indexOf(a);
      const range = e.shiftKey && rp.lastTile !== null ? tiles.slice(Math.min(i, rp.lastTile), Math.max(i, rp.lastTile) + 1) : [a];
      const on = !a.classList.contains("rp-sel");
      range.forEach((t) => { t.classList.toggle("rp-sel", on); on ? rp.sel.add(Number(t.dataset.cid)) : rp.sel.delete(Number(t.dataset.cid)); });
      rp.lastTile = i;
    }
  });
}
