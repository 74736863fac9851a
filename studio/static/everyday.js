// Everyday keys (issue 34), loaded after studio.js (studio/ui.py: studio_js): apart from
// the rating keys, and using only what studio.js publishes on window.rp.
() => {
  if (window.rpEveryday) return;
  window.rpEveryday = true;
  const rp = window.rp;
  const $ = (id) => document.getElementById(id);
  const visible = (el) => !!el && el.offsetParent !== null;
  // A key meant for the focused control (a tab, a button, a field, a grid tile) never reaches
  // the queue's handler: this listener is on <body>, which a key passes before <document>.
  // Grid tiles move focus with the arrows, Enter opens one, space selects it; `?` lists every
  // key and Escape closes that list.
  const FOR_CONTROL = "button, [role=tab], [role=tablist], input, textarea, select, a[href], [contenteditable=true]";
  const CONTROL_KEYS = ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", " ", "Enter"];
  const TILE_STEP = { ArrowLeft: -1, ArrowRight: 1 };
  const gridTiles = () => Array.from(document.querySelectorAll(".rp-tile")).filter(visible);
  const tilesPerRow = (tiles) => {
    const first = tiles.findIndex((t) => t.offsetTop !== tiles[0].offsetTop);
    return first < 0 ? tiles.length : first;
  };
  const moveTileFocus = (tile, key) => {
    const tiles = gridTiles(), row = tilesPerRow(tiles);
    const step = TILE_STEP[key] || (key === "ArrowUp" ? -row : row);
    const to = tiles[Math.max(0, Math.min(tiles.length - 1, tiles.indexOf(tile) + step))];
    if (to) to.focus();
  };
  const onTileKey = (e, tile) => {
    if (e.key in TILE_STEP || e.key === "ArrowUp" || e.key === "ArrowDown") moveTileFocus(tile, e.key);
    else if (e.key === "Enter") rp.jump(Number(tile.dataset.cid));
    else if (e.key === " ") { tile.click(); tile.focus(); }
    else return false;
    return true;
  };
  // The list of keys: the rating keys are read from the rate bar, like the handler above does.
  const keyRows = () => [
    ...Array.from(document.querySelectorAll("[data-rp-key]")).map((b) =>
      [b.dataset.rpKey.split(" ").join(" or "), b.dataset.rpAct]),
    ["z or Ctrl+z", "undo your last rating"],
    ["n", "write a note (Enter saves it, Escape leaves the box)"],
    ["→ or j / ← or k", "next / previous painting"],
    ["Grid: arrow keys", "move between thumbnails"],
    ["Grid: Enter / space", "open the thumbnail / select it"],
    ["?", "show or hide this list"],
    ["Escape", "close this list"],
  ];
  const keysOverlay = () => {
    let box = $("rp-keys-overlay");
    if (box) return box;
    box = document.createElement("div");
    box.id = "rp-keys-overlay";
    box.hidden = true;
    box.setAttribute("role", "dialog");
    box.setAttribute("aria-label", "Keyboard keys");
    const card = box.appendChild(document.createElement("div"));
    card.className = "rp-keys-card";
    card.appendChild(document.createElement("h3")).textContent = "Keys";
    const table = card.appendChild(document.createElement("table"));
    keyRows().forEach(([key, what]) => {
      const tr = table.appendChild(document.createElement("tr"));
      tr.appendChild(document.createElement("th")).appendChild(document.createElement("kbd")).textContent = key;
      tr.appendChild(document.createElement("td")).textContent = what;
    });
    card.appendChild(document.createElement("p")).textContent = "Escape closes this list.";
    box.addEventListener("click", (e) => { if (e.target === box) box.hidden = true; });
    document.body.appendChild(box);
    return box;
  };
  rp.toggleKeys = (show) => { const box = keysOverlay(); box.hidden = show === undefined ? !box.hidden : !show; };
  document.body.addEventListener("keydown", (e) => {
    const t = e.target;
    const typing = t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable);
    const open = $("rp-keys-overlay") && !$("rp-keys-overlay").hidden;
    if (e.key === "Escape" && open) { rp.toggleKeys(false); e.stopPropagation(); return; }
    if (e.key === "?" && !typing && !e.ctrlKey && !e.altKey && !e.metaKey) {
      e.preventDefault(); e.stopPropagation(); rp.toggleKeys(); return;
    }
    const tile = t && t.closest && t.closest(".rp-tile");
    if (tile && !e.ctrlKey && !e.altKey && !e.metaKey && onTileKey(e, tile)) {
      e.preventDefault(); e.stopPropagation(); return;
    }
    if (t && t.closest && t.closest(FOR_CONTROL) && CONTROL_KEYS.includes(e.key) && !typing) {
      e.stopPropagation();  // the control's own key (a tab's arrows, a button's space)
    }
  });
}
