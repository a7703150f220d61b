// attnkit explorer: the long-context view of a causal LM's attention (attnkit inspect --html, the notebook).
// An overview canvas draws every token as a cell shaded by the attention it receives (or by one captured
// row), so 16k tokens are one picture and sinks show at a glance; a click picks a token, whose
// neighbourhood the text pane shows (only a window of tokens is ever in the DOM); the layer x head grid is
// coloured by role. Loaded before explorer.js, whose helpers (el, svg, SVG, display) it calls at run time.
"use strict";

const ROLE_COLOURS = { induction: "#984ea3", "previous-token": "#1a9850", sink: "#d64524", local: "#ff7f00", broad: "#2166ac", mixed: "#b3b3b3" };
const PER_LINE = 128, WINDOW = 240;

function contextValues(data, choice) {
  // the values shading the tokens: a derived map's row, a captured row, or the attention received (all
  // layers' mean or one layer's)
  const map = choice.map !== "attention" && (data.maps || {})[choice.map];
  if (map && choice.picked !== null && map.rows.includes(choice.picked)) {
    return { values: map.weights[map.rows.indexOf(choice.picked)], what: `${choice.map} map: row of token ${choice.picked} (derived from every layer's attention)` };
  }
  if (choice.row !== null) {
    const item = data.captured.find((c) => c.layer === choice.layer && c.head === choice.head && c.rows.includes(choice.row));
    if (item) return { values: item.weights[item.rows.indexOf(choice.row)], what: `layer ${choice.layer}, head ${choice.head}: row of token ${choice.row} (its attention over the context)` };
  }
  if (choice.layer === "all") {
    const values = data.received[0].map((_, j) => data.received.reduce((a, r) => a + r[j], 0) / data.received.length);
    return { values, what: "attention received, mean of all layers" };
  }
  return { values: data.received[choice.layer], what: `attention received in layer ${choice.layer}` };
}

function shadeOf(values, scale) {
  // per view: linear (weight / largest) or log (weight against the median, so sinks and the rest both show)
  const top = Math.max(...values, 1e-12);
  if (scale === "linear") return (v) => v / top;
  const median = [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] || 1e-12;
  const span = Math.log1p(top / Math.max(median, 1e-12));
  return (v) => Math.log1p(v / Math.max(median, 1e-12)) / span;
}

function overview(data, values, shade, onPick, picked) {
  const cell = 8, rows = Math.ceil(data.tokens.length / PER_LINE);
  const canvas = el("canvas", { class: "context-overview", width: PER_LINE * cell, height: rows * (cell + 2), "data-tokens": data.tokens.length });
  const g = canvas.getContext("2d");
  values.forEach((v, i) => {
    g.fillStyle = `rgba(214, 69, 36, ${Math.max(shade(v), 0.03).toFixed(3)})`;
    g.fillRect((i % PER_LINE) * cell, Math.floor(i / PER_LINE) * (cell + 2), cell - 1, cell);
  });
  if (picked !== null) {
    g.strokeStyle = "#1d1d1f";
    g.strokeRect((picked % PER_LINE) * cell - 0.5, Math.floor(picked / PER_LINE) * (cell + 2) - 0.5, cell, cell + 1);
  }
  const at = (event) => {
    const box = canvas.getBoundingClientRect();
    const i = Math.floor((event.clientY - box.top) / (cell + 2)) * PER_LINE + Math.floor((event.clientX - box.left) / cell);
    return i >= 0 && i < data.tokens.length ? i : null;
  };
  canvas.addEventListener("mousemove", (event) => {
    const i = at(event);
    canvas.title = i === null ? "" : `token ${i}: ${display(data.tokens[i])} (${values[i].toFixed(5)})`;
  });
  canvas.addEventListener("click", (event) => { const i = at(event); if (i !== null) onPick(i); });
  return canvas;
}

function textPane(data, values, shade, onPick, picked) {
  // the tokens around the picked one (or the first ones), shaded; the prompt/continuation border marked
  const centre = picked === null ? 0 : picked;
  const start = Math.max(0, centre - WINDOW / 2), end = Math.min(data.tokens.length, start + WINDOW);
  const pane = el("div", { class: "context-text", "data-start": start, "data-end": end });
  if (start > 0) pane.append(el("span", { class: "score" }, `\u2026 ${start} tokens before \u2026 `));
  for (let i = start; i < end; i++) {
    const s = shade(values[i]);
    const starts = /^[\u2581\u0120 ]/.test(data.tokens[i]) ? " word-start" : "";
    const node = el("span", { class: `ctx-tok${starts}${i === picked ? " picked" : ""}${i >= data.prompt_tokens ? " generated" : ""}`, "data-index": i, title: `token ${i}: ${values[i].toFixed(5)}`, style: `background-color: rgba(214, 69, 36, ${s.toFixed(3)}); color: ${s > 0.6 ? "#fff" : ""}` }, display(data.tokens[i]) || "\u00b7");
    node.addEventListener("click", () => onPick(i));
    pane.append(node);
  }
  if (end < data.tokens.length) pane.append(el("span", { class: "score" }, ` \u2026 ${data.tokens.length - end} tokens after`));
  return pane;
}

function roleGrid(data, onPick) {
  const cell = 22, left = 60, top = 30, heads = data.heads, layers = data.layers;
  const width = Math.max(left + heads * cell + 10, 420), height = top + layers * cell + 10;
  const root = svg("svg", { xmlns: SVG, class: "role-grid", width, height, viewBox: `0 0 ${width} ${height}` });
  root.append(svg("text", { x: 0, y: 12, class: "axis-title" }, `layer x head (${data.kv_heads} key heads: groups of ${heads / data.kv_heads})`));
  data.head_stats.forEach((h) => {
    const rect = svg("rect", { x: left + h.head * cell, y: top + h.layer * cell, width: cell - 2, height: cell - 2, fill: ROLE_COLOURS[h.role], class: "role-cell", "data-layer": h.layer, "data-head": h.head, "data-role": h.role });
    const induction = h.induction === null ? "" : `, induction ${h.induction}`;
    rect.append(svg("title", {}, `layer ${h.layer}, head ${h.head} (key group ${h.kv_group}): ${h.role}; sink ${h.sink}, previous ${h.previous}, distance ${h.distance}, entropy ${h.entropy} nats${induction}`));
    rect.addEventListener("click", () => onPick(h.layer, h.head));
    root.append(rect);
  });
  for (let l = 0; l < layers; l++) root.append(svg("text", { x: left - 6, y: top + l * cell + 15, "text-anchor": "end", class: "axis-title" }, `layer ${l}`));
  return root;
}

function roleLegend() {
  return el("p", { class: "legend-line" }, ...Object.entries(ROLE_COLOURS).map(([role, colour]) =>
    el("span", { class: "legend-item" }, el("span", { class: "swatch", style: `background: ${colour}` }), ` ${role}`)));
}

function showContext(data, fetchRow) {
  // fetchRow(i, layer): the served page's way to capture a token's row on click (a promise of
  // {layer, head, rows, weights} items); a saved page has none and says which --rows to add
  const box = document.getElementById("context-results");
  const card = el("article", { class: "card context-card" });
  const first = data.captured[0] || { layer: data.layers - 1, head: 0 };
  const choice = { layer: "all", head: first.head, row: null, scale: "log", picked: null, map: "attention" };
  const generated = data.tokens.length - data.prompt_tokens;
  card.append(el("p", { class: "source" }, `${data.model}: ${data.tokens.length} tokens${generated ? ` (${generated} generated)` : ""}, ${data.layers} layers x ${data.heads} heads`));
  const layerSelect = select("context-layer", [["all", "all layers (mean)"], ...[...Array(data.layers).keys()].map((l) => [l, `layer ${l}`])], "all");
  const scaleSelect = select("context-scale", [["log", "log (sinks and the rest)"], ["linear", "linear"]], "log");
  const mapSelect = select("context-map", [["attention", "attention"], ...Object.keys(data.maps || {}).map((m) => [m, m])], "attention");
  const title = el("p", { class: "view-title" }), note = el("p", { class: "score context-note" });
  const body = el("div", { class: "context-body" });
  card.append(el("div", { class: "row" }, el("label", {}, "layer ", layerSelect), el("label", {}, "scale ", scaleSelect), el("label", {}, "map ", mapSelect)), title, note, body);
  const pickToken = async (i) => {
    choice.picked = i;
    const layer = choice.layer === "all" ? first.layer : choice.layer;
    const find = () => data.captured.find((c) => c.layer === layer && c.head === choice.head && c.rows.includes(i))
      || data.captured.find((c) => c.layer === layer && c.rows.includes(i));
    if (!find() && fetchRow) {
      note.textContent = `capturing the row of token ${i}\u2026`;
      try {
        data.captured.push(...await fetchRow(i, layer));
      } catch (e) {
        note.textContent = e.message;
      }
    }
    const hit = find();
    choice.row = hit ? i : null;
    if (hit) { choice.layer = hit.layer; choice.head = hit.head; layerSelect.value = String(hit.layer); }
    note.textContent = hit ? "" : `token ${i} (${display(data.tokens[i])}): its row was not captured; captured rows: ${[...new Set(data.captured.flatMap((c) => c.rows))].slice(0, 12).join(", ")} (attnkit inspect --rows ${i})`;
    draw();
  };
  const pickHead = (l, h) => {
    choice.layer = l; choice.head = h; layerSelect.value = String(l);
    if (choice.picked !== null) pickToken(choice.picked); else draw();
  };
  const draw = () => {
    const { values, what } = contextValues(data, choice);
    const shade = shadeOf(values, choice.scale);
    title.textContent = `${what} \u00b7 ${choice.scale === "log" ? "log scale against the median token" : "linear scale to the largest"}`;
    body.replaceChildren(overview(data, values, shade, pickToken, choice.picked), textPane(data, values, shade, pickToken, choice.picked), roleGrid(data, pickHead), roleLegend());
    card.dataset.drawn = `${choice.layer}/${choice.head}/${choice.row}/${choice.map}`;
  };
  layerSelect.addEventListener("change", () => { choice.layer = layerSelect.value === "all" ? "all" : Number(layerSelect.value); choice.row = null; draw(); });
  scaleSelect.addEventListener("change", () => { choice.scale = scaleSelect.value; draw(); });
  mapSelect.addEventListener("change", () => {
    choice.map = mapSelect.value;
    const map = (data.maps || {})[choice.map];
    if (map && (choice.picked === null || !map.rows.includes(choice.picked))) choice.picked = map.rows[map.rows.length - 1];
    draw();
  });
  draw();
  box.replaceChildren(card);
}
