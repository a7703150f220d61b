// attnkit explorer: translate, classify and align views over the JSON API (or over embedded results).
// User text only ever reaches the page as text nodes (el/svg below never parse HTML).
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const SPECIALS = new Set(["</s>", "<s>", "<pad>", "[CLS]", "[SEP]", "[PAD]", "<|endoftext|>"]);
const state = { models: null, limits: { max_sentences: 30, max_words: 60 } };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function status(message, isError) {
  const node = document.getElementById("status");
  node.textContent = message;
  node.className = isError ? "error" : "";
}

async function api(path, body) {
  const response = await fetch(path, body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

// ---- attention arithmetic (the same rules as attnkit.data.words and attnkit.attention) -------------

function family(pieces) {
  // the tokenizer family's marker (as attnkit.data.words): sentencepiece "\u2581" and byte-level BPE
  // "\u0120" start words, WordPiece "##" continues them
  const content = pieces.filter((p) => !SPECIALS.has(p));
  if (content.some((p) => p.startsWith("\u2581"))) return "\u2581";
  if (content.some((p) => p.startsWith("\u0120"))) return "\u0120";
  return "##";
}

function wordGroups(pieces) {
  const groups = [], marker = family(pieces);
  pieces.forEach((p, i) => {
    const starts = marker === "##" ? !p.startsWith("##") : p.startsWith(marker);
    if (!groups.length || starts || SPECIALS.has(p) || SPECIALS.has(pieces[i - 1])) groups.push([i]);
    else groups[groups.length - 1].push(i);
  });
  return groups;
}

function groupLabel(pieces, group) {
  const word = group.map((i) => pieces[i].replace(/^##/, "")).join("").replace(/^[\u2581\u0120]/, "");
  return word || pieces[group[0]];
}

function toWords(matrix, src, tgt) {
  // source word = sum of its pieces' columns; target word = mean of its pieces' rows
  const sg = wordGroups(src), tg = wordGroups(tgt);
  const cols = matrix.map((row) => sg.map((g) => g.reduce((a, j) => a + row[j], 0)));
  const rows = tg.map((g) => cols[0].map((_, j) => g.reduce((a, i) => a + cols[i][j], 0) / g.length));
  return { matrix: rows, src: sg.map((g) => groupLabel(src, g)), tgt: tg.map((g) => groupLabel(tgt, g)) };
}

function meanHeads(layer) {
  return layer[0].map((row, t) => row.map((_, s) => layer.reduce((a, h) => a + h[t][s], 0) / layer.length));
}

function entropy(row) {
  return -row.reduce((a, w) => (w > 0 ? a + w * Math.log(w) : a), 0);
}

function display(token) {
  return token === "\u2581" || token === "\u0120" ? "_" : token.replace(/[\u2581\u0120]/g, "");
}

// ---- translate view --------------------------------------------------------------------------------

function layerSet(result, which) {
  // the per-layer maps a view reads, with its row and column tokens: cross-attention (target x source),
  // or the encoder's (source x source) or decoder's (target x target) self-attention
  if (which === "encoder") {
    return { maps: result.encoder_attention, rows: result.source_tokens, cols: result.source_tokens,
      labels: { rows: "queries (source)", cols: "keys (source)" }, name: "encoder self-attention" };
  }
  if (which === "decoder") {
    return { maps: result.decoder_attention, rows: result.target_tokens, cols: result.target_tokens,
      labels: { rows: "queries (target)", cols: "keys (target)" }, name: "decoder self-attention" };
  }
  return { maps: result.layer_attention, rows: result.target_tokens, cols: result.source_tokens,
    labels: { rows: "target", cols: "source" }, name: "cross-attention" };
}

function currentView(result, view) {
  let matrix = result.attention, src = result.source_tokens, tgt = result.target_tokens;
  if (view.rank > 0 && result.alternative_attention) {  // an n-best alternative (decoding attention only)
    matrix = result.alternative_attention[view.rank - 1];
    tgt = result.alternative_tokens[view.rank - 1];
    if (view.words) ({ matrix, src, tgt } = toWords(matrix, src, tgt));
    return { matrix, src, tgt };
  }
  const which = view.which || "cross";
  const set = layerSet(result, which);
  if (set.maps && (which !== "cross" || view.layer !== "model")) {
    ({ rows: tgt, cols: src } = set);
    if (view.layer === "all") matrix = meanHeads(set.maps.map((layer) => meanHeads(layer)));  // the summary
    else {
      const layer = set.maps[view.layer === "model" ? set.maps.length - 1 : Number(view.layer)];
      matrix = view.head === "mean" || view.layer === "model" ? meanHeads(layer) : layer[Number(view.head)];
    }
  }
  if (view.words) ({ matrix, src, tgt } = toWords(matrix, src, tgt));
  return { matrix, src, tgt };
}

function highlight(card, side, index, weights) {
  // hovering a token of `side` shades the other side's tokens by `weights`
  const other = side === "target" ? "source" : "target";
  card.querySelectorAll(`.tok.${other}`).forEach((node, j) => {
    const w = index === null ? 0 : weights[j];
    node.style.backgroundColor = index === null ? "" : `rgba(214, 69, 36, ${w.toFixed(4)})`;
    node.style.color = index !== null && w > 0.55 ? "#ffffff" : "";
    node.dataset.highlight = index === null ? "" : w.toFixed(5);
  });
  card.querySelectorAll(`.tok.${side}`).forEach((node, j) => node.classList.toggle("active", j === index));
  card.querySelectorAll("rect.cell").forEach((cell) => {
    const hit = index !== null && Number(cell.dataset[side === "target" ? "row" : "col"]) === index;
    cell.classList.toggle("hot", hit);
  });
}

function pieceStarts(pieces) {
  // whether each piece begins a word (a continuation piece is drawn with a dotted left edge)
  const starts = new Array(pieces.length).fill(false);
  wordGroups(pieces).forEach((g) => { starts[g[0]] = true; });
  return starts;
}

function tokenStrip(card, tokens, side, matrix, label) {
  // side: "target" for the matrix's rows, "source" for its columns; label: what the strip holds
  const strip = el("div", { class: `strip ${side}` }, el("span", { class: "side" }, label || side));
  const starts = pieceStarts(tokens);
  tokens.forEach((token, i) => {
    const kind = starts[i] ? "" : " cont";
    const node = el("span", { class: `tok ${side}${kind}`, "data-index": i, tabindex: 0, title: token }, display(token));
    const weights = () => (side === "target" ? matrix[i] : matrix.map((row) => row[i]));
    node.addEventListener("mouseenter", () => highlight(card, side, i, weights()));
    node.addEventListener("focus", () => highlight(card, side, i, weights()));
    node.addEventListener("mouseleave", () => highlight(card, side, null, []));
    strip.append(node);
  });
  return strip;
}

function download(name, type, content) {
  const link = el("a", { href: URL.createObjectURL(new Blob([content], { type })), download: name });
  document.body.append(link);
  link.click();
  link.remove();
}

function exportPng(text, width, height, name) {
  const image = new Image();
  image.onload = () => {
    const canvas = el("canvas", { width: width * 2, height: height * 2 });
    const context = canvas.getContext("2d");
    context.scale(2, 2);
    context.drawImage(image, 0, 0);
    canvas.toBlob((blob) => download(name, "image/png", blob));
  };
  image.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(text);
}

function select(id, options, value) {
  const node = el("select", { id });
  options.forEach(([v, label]) => node.append(el("option", { value: v }, label)));
  node.value = value;
  return node;
}

function nbestList(result) {
  // each hypothesis is a button: its attention replaces the matrix (the best one is item 1); reranked
  // lists are ordered by the combined score, which each item shows beside the model's own
  const ranked = result.rerank ? result.rerank.candidates : null;
  const list = el("ol", { class: "nbest" });
  [result.translation, ...result.alternatives].forEach((text, k) => {
    const score = k ? result.alternative_scores[k - 1] : result.score;
    const c = ranked && ranked[k];
    const detail = c ? ` combined ${c.combined} (model ${c.forward}, channel ${c.channel})` : ` log-probability ${score}`;
    list.append(el("li", {}, el("button", { type: "button", class: "hypothesis", "data-rank": k, title: "show this hypothesis's attention" }, text), el("span", { class: "score" }, detail)));
  });
  const why = ranked ? `, reranked by a channel model (weight ${result.rerank.channel_weight})` : "";
  const box = el("details", {}, el("summary", {}, `n-best (${result.alternatives.length + 1})${why}: click one to see its attention`), list);
  return { box, list };
}

function describe(result, view, set, kind, heads) {
  // the title over a drawing: which attention, layer, head or map, and in which units
  const which = view.which || "cross", last = set.maps ? set.maps.length - 1 : 0;
  let what;
  if (view.rank > 0) what = `hypothesis #${view.rank + 1}: its decoding attention`;
  else if (kind === "model") what = `${set.name}: every layer and head`;
  else if (kind === "head") {
    const l = ["model", "all"].includes(view.layer) ? last : view.layer;
    what = `${set.name}, layer ${l}, head${heads.length === 1 ? "" : "s"} ${heads.join(", ") || "(none chosen)"}`;
  } else if (view.layer === "model" && which === "cross") {
    what = result.attention_map ? `map: ${result.attention_map}, derived from the attention` : "decoding attention (what the search used)";
  } else if (view.layer === "all") what = `${set.name}, mean of all layers and heads`;
  else if (view.layer === "model") what = `${set.name}, layer ${last}, mean of heads`;
  else what = `${set.name}, layer ${view.layer}, ${view.head === "mean" ? "mean of heads" : `head ${view.head}`}`;
  return `${what} \u00b7 ${view.words ? "words (subwords merged)" : "subword pieces"}`;
}

function refill(node, options) {
  // new options for a selector, keeping its value when it is still one of them
  const keep = node.value;
  node.replaceChildren(...options.map(([v, label]) => el("option", { value: v }, label)));
  node.value = options.some(([v]) => String(v) === keep) ? keep : String(options[0][0]);
}

function layerChoices(layers, self) {
  return [["model", self ? "last layer (mean of heads)" : "decoding attention"], ["all", "all layers and heads (mean)"],
    ...[...Array(layers).keys()].map((l) => [l, `layer ${l}`])];
}

function headChoices(heads) {
  return [["mean", "head mean"], ...[...Array(heads).keys()].map((h) => [h, `head ${h}`])];
}

function layerControls(bar, index, shape, selfAttention) {
  // a Transformer's selectors: layer, head, kind of attention, view
  const c = {};
  c.layer = select(`layer-${index}`, layerChoices(shape[0], false), "model");
  c.head = select(`head-${index}`, headChoices(shape[1]), "mean");
  c.layer.classList.add("layer-select");
  c.head.classList.add("head-select");
  bar.append(el("label", {}, "layer ", c.layer), el("label", {}, "head ", c.head));
  if (selfAttention) {
    c.which = select(`which-${index}`, [["cross", "cross-attention"], ["encoder", "encoder self-attention"], ["decoder", "decoder self-attention"]], "cross");
    c.which.classList.add("which-select");
    bar.append(el("label", {}, "kind ", c.which));
  }
  c.view = select(`view-${index}`, [["matrix", "matrix"], ["head", "head view"], ["model", "model view"]], "matrix");
  c.view.classList.add("view-select");
  bar.append(el("label", {}, "view ", c.view));
  return c;
}

function headDrawing(set, view, picked) {
  // the head view of one layer: the chosen head, or the picked ones; words merge each head's map
  const l = ["model", "all"].includes(view.layer) ? set.maps.length - 1 : Number(view.layer);
  const heads = view.head !== "mean" && !["model", "all"].includes(view.layer) ? [Number(view.head)] : [...picked].sort((a, b) => a - b);
  let src = set.cols, tgt = set.rows;
  const maps = set.maps[l].map((m) => {
    if (!view.words) return m;
    const merged = toWords(m, set.cols, set.rows);
    ({ src, tgt } = merged);
    return merged.matrix;
  });
  return { heads, maps, src, tgt, drawing: headView(maps, heads, src, tgt, set.labels) };
}

function translationCard(result, index, loadLayers, share) {
  const card = el("article", { class: "card translation-card", "data-index": index });
  card.append(el("p", { class: "source" }, result.source));
  const shownText = el("p", { class: "translation" }, result.translation);
  card.append(shownText, el("p", { class: "score" }, `log-probability ${result.score} (length-normalized)`));
  if (result.attention_map) {
    card.append(el("p", { class: "score map-kind" }, `map: ${result.attention_map} (derived from the attention, rows normalized; the layer views stay raw)`));
  }
  const nbest = result.alternatives && result.alternatives.length ? nbestList(result) : null;
  if (nbest) card.append(nbest.box);
  (result.warnings || []).forEach((w) => card.append(el("p", { class: "warning" }, w)));
  if (!result.translation) return card;
  const view = { words: false, layer: "model", head: "mean", rank: 0 };
  const bar = el("div", { class: "row view-controls" });
  const words = el("input", { type: "checkbox", class: "words-toggle" });
  const zoom = select(`zoom-${index}`, [["fit", "fit the page"], ["full", "full size"]], "fit");
  zoom.classList.add("zoom-select");
  bar.append(el("label", {}, words, " words (subwords merged)"));
  // a Transformer's per-layer maps: embedded in the result, or fetched for this card when first chosen
  const shape = result.layer_attention ? [result.layer_attention.length, result.layer_attention[0].length] : loadLayers && loadLayers.shape;
  // self-attention: fetched from a server that returns it, or embedded in a saved result
  const selfAttention = Boolean((loadLayers && loadLayers.selfAttention) || result.encoder_attention);
  const c = shape && shape[0] > 0 ? layerControls(bar, index, shape, selfAttention) : {};
  const picked = new Set([...Array(shape ? shape[1] : 0).keys()]);
  let picker = null;
  const exports = el("span", { class: "exports" });
  ["SVG", "PNG", "JSON"].forEach((kind) => exports.append(el("button", { type: "button", "data-export": kind.toLowerCase() }, kind)));
  bar.append(el("label", {}, "size ", zoom), exports);
  const title = el("p", { class: "view-title" });
  const body = el("div", { class: "attention" });
  card.append(bar, title, body);
  const sync = () => {  // the layer and head choices of the kind shown (an encoder may have more layers)
    if (!c.layer) return;
    const set = layerSet(result, view.which || "cross");
    const layers = set.maps ? set.maps.length : shape[0], heads = set.maps ? set.maps[0].length : shape[1];
    refill(c.layer, layerChoices(layers, (view.which || "cross") !== "cross"));
    refill(c.head, headChoices(heads));
    if (!picker || picker.childElementCount !== heads) {
      picked.clear();
      [...Array(heads).keys()].forEach((h) => picked.add(h));
      picker = headPicker(heads, picked, () => draw());
    }
  };
  const draw = () => {
    view.words = words.checked;
    view.which = c.which ? c.which.value : "cross";
    if (c.layer) { view.layer = c.layer.value; view.head = c.head.value; c.head.disabled = ["model", "all"].includes(view.layer); }
    const { matrix, src, tgt } = currentView(result, view);
    const set = layerSet(result, view.which);
    const kind = c.view && set.maps && view.rank === 0 ? c.view.value : "matrix";
    const labels = view.which === "cross" ? { rows: "target", cols: "source" } : set.labels;
    let heads = [];
    card.currentView = { source_tokens: src, target_tokens: tgt, attention: matrix };
    if (kind === "head") {
      const drawn = headDrawing(set, view, picked);
      heads = drawn.heads;
      body.replaceChildren(picker, scrollBox(drawn.drawing));
      card.currentView = { source_tokens: drawn.src, target_tokens: drawn.tgt, heads, head_attention: heads.map((h) => drawn.maps[h]) };
    } else if (kind === "model") {
      body.replaceChildren(scrollBox(modelView(set.maps, (l, h) => {
        c.layer.value = String(l); c.head.value = String(h); c.view.value = "matrix"; change();
      }, set.labels, share)));
      card.currentView = { source_tokens: set.cols, target_tokens: set.rows, layer_attention: set.maps };
    } else {
      const hover = (i) => highlight(card, "target", i, i === null ? [] : matrix[i]);
      const options = { onHover: hover, zoom: zoom.value, labels, share };
      body.replaceChildren(tokenStrip(card, src, "source", matrix, labels.cols), tokenStrip(card, tgt, "target", matrix, labels.rows),
        scrollBox(matrixSvg(matrix, src, tgt, options)), scrollBox(linksSvg(matrix, src, tgt, options)));
    }
    title.textContent = describe(result, view, set, kind, heads);
    card.currentView.view = { ...view, kind, title: title.textContent };
  };
  const change = async () => {
    view.rank = 0;  // layer views are the best hypothesis's
    if (nbest) nbest.list.querySelectorAll("button.hypothesis").forEach((b) => b.classList.remove("shown"));
    shownText.textContent = result.translation;
    if (c.which && c.which.value !== "cross" && !result.encoder_attention) {
      try {
        Object.assign(result, await loadLayers.selfMaps(result));
      } catch (e) {
        c.which.value = "cross";
        status(e.message, true);
      }
    }
    const cross = !c.which || c.which.value === "cross";
    if (c.layer && cross && (c.layer.value !== "model" || c.view.value !== "matrix") && !result.layer_attention) {
      c.layer.disabled = true;
      try {
        result.layer_attention = await loadLayers.fetch(result);
      } catch (e) {
        c.layer.value = "model";
        c.view.value = "matrix";
        status(e.message, true);
      } finally {
        c.layer.disabled = false;
      }
    }
    view.which = c.which ? c.which.value : "cross";
    sync();
    draw();
    const which = c.which && c.which.value !== "cross" ? `/${c.which.value}` : "";
    card.dataset.drawn = c.layer ? `${c.layer.value}/${c.view.value}${which}` : "model";
  };
  [words, zoom, c.layer, c.head, c.view, c.which].forEach((node) => node && node.addEventListener("change", change));
  if (nbest) nbest.list.addEventListener("click", async (event) => {
    const button = event.target.closest("button.hypothesis");
    if (!button) return;
    if (Number(button.dataset.rank) > 0 && !result.alternative_attention) {
      if (!loadLayers) return;  // a static page without the alternatives' maps
      try {
        Object.assign(result, await loadLayers.alternatives(result));
      } catch (e) {
        status(e.message, true);
        return;
      }
    }
    view.rank = Number(button.dataset.rank);
    nbest.list.querySelectorAll("button.hypothesis").forEach((b) => b.classList.toggle("shown", b === button));
    shownText.textContent = view.rank ? `#${view.rank + 1}: ${button.textContent}` : result.translation;
    if (c.layer) { c.layer.value = "model"; c.view.value = "matrix"; }  // layers are the best's
    draw();
    card.dataset.drawn = `rank ${view.rank}`;
  });
  exports.addEventListener("click", (event) => {
    const kind = event.target.dataset && event.target.dataset.export;
    const stem = `attention-${index + 1}`;
    const shown = body.querySelector("svg.matrix, svg.head-view, svg.model-view");  // the view on screen
    const heading = `${result.source} \u2192 ${shownText.textContent}  (${title.textContent})`;
    if (kind === "svg") download(`${stem}.svg`, "image/svg+xml", exportSvg(shown, heading));
    if (kind === "png") exportPng(exportSvg(shown, heading), Number(shown.getAttribute("width")), Number(shown.getAttribute("height")) + 26, `${stem}.png`);
    if (kind === "json") download(`${stem}.json`, "application/json", JSON.stringify(card.currentView, null, 1));
  });
  sync();
  draw();
  return card;
}

function showTranslations(results, loadLayers) {
  const box = document.getElementById("translate-results");
  box.replaceChildren(...results.map((r, i) => translationCard(r, i, loadLayers)));
}

function layerLoader(request, model) {
  // Layer attention (L, H, T, S) and the n-best's own maps are asked for one card at a time, when first
  // shown, by translating that sentence again with the same settings and layers (alternatives) on.
  const again = async (result, extra) => {
    const answer = (await api("/api/translate", { ...request, sentences: [result.source], ...extra })).results[0];
    if (answer.translation !== result.translation) throw new Error("the model answered differently; translate again");
    return answer;
  };
  return {
    shape: model && model.layers > 0 ? [model.layers, model.heads] : null,
    selfAttention: Boolean(model && model.self_attention),
    selfMaps: async (result) => {
      const answer = await again(result, { self_attention: true });
      return { encoder_attention: answer.encoder_attention, decoder_attention: answer.decoder_attention };
    },
    fetch: async (result) => (await again(result, { layers: true })).layer_attention,
    alternatives: async (result) => {
      const answer = await again(result, { alternative_attention: true });
      return { alternative_tokens: answer.alternative_tokens, alternative_attention: answer.alternative_attention };
    },
  };
}

// ---- classify view ---------------------------------------------------------------------------------

function reprior(probs, weights, tauFrom, tauTo) {
  const scaled = probs.map((p, c) => p * Math.pow(weights[c], tauFrom - tauTo));
  const total = scaled.reduce((a, b) => a + b, 0);
  return scaled.map((p) => p / total);
}

function classificationCard(result, prior, index) {
  const card = el("article", { class: "card classification-card", "data-index": index });
  const labels = prior.labels, base = labels.map((c) => result.probabilities[c]);
  const decision = el("p", { class: "decision" });
  const bars = el("div", { class: "bars" });
  const slider = el("input", { type: "range", min: 0, max: 1, step: 0.05, value: prior.prior_correction, class: "prior-slider" });
  const tauText = el("span", { class: "tau" });
  const redraw = () => {
    const tau = Number(slider.value);
    const probs = reprior(base, prior.class_weights, prior.prior_correction, tau);
    const best = probs.indexOf(Math.max(...probs));
    const stars = /^\d+$/.test(labels[best]) ? `${labels[best]} star${labels[best] === "1" ? "" : "s"}` : labels[best];
    decision.replaceChildren(el("span", { class: "label", "data-label": labels[best] }, stars), ` (p = ${probs[best].toFixed(2)})`);
    card.dataset.label = labels[best];
    tauText.textContent = `prior correction ${tau.toFixed(2)} (0: the trained model as is; 1: its training class weights divided out)`;
    bars.replaceChildren(...labels.map((c, k) => el("div", { class: "bar-row" }, el("span", { class: "bar-label" }, c),
      el("span", { class: "bar", style: `width: ${(probs[k] * 100).toFixed(1)}%`, "data-probability": probs[k].toFixed(5) }),
      el("span", { class: "bar-value" }, probs[k].toFixed(3)))));
  };
  slider.addEventListener("input", redraw);
  card.append(decision, bars, el("label", { class: "row" }, tauText, slider));
  card.append(el("p", { class: "legend-line" }, el("span", { class: "swatch sentence-swatch" }), " sentence weight (left border; number) ",
    el("span", { class: "swatch word-swatch" }), " word weight x its sentence's, relative to the document's largest (hover: the word's own weight)"));
  const text = el("div", { class: "document" });
  // a word's shade is its weight times its sentence's, scaled by the document's largest: a sentence the
  // model hardly read shows faint words (scaling per sentence made every sentence show a full-red word)
  const effective = result.word_weights.map((ww, j) => ww.map((w) => w * result.sentence_weights[j]));
  const top = Math.max(...effective.flat(), 1e-9);
  result.sentences.forEach((words, j) => {
    const sw = result.sentence_weights[j];
    const row = el("p", { class: "sentence", "data-weight": sw.toFixed(5), style: `border-left-color: rgba(33, 102, 172, ${Math.max(sw, 0.05).toFixed(4)})` },
      el("span", { class: "sentence-weight" }, sw.toFixed(2)));
    const ww = result.word_weights[j];
    words.forEach((word, k) => {
      const unread = j >= state.limits.max_sentences || k >= state.limits.max_words;
      const node = el("span", { class: unread ? "word unread" : "word", "data-weight": ww[k].toFixed(5), title: unread ? "not read by the model" : `word weight ${ww[k].toFixed(3)} in its sentence; shade ${(effective[j][k] / top).toFixed(3)} (x sentence weight ${sw.toFixed(3)}, relative to the largest)` }, word);
      if (!unread) {
        node.dataset.shade = (effective[j][k] / top).toFixed(5);
        node.style.backgroundColor = `rgba(214, 69, 36, ${node.dataset.shade})`;
      }
      row.append(node, " ");
    });
    text.append(row);
  });
  if (result.unread_words) card.append(el("p", { class: "warning" }, `${result.unread_words} words past the model's limits were not read (dotted).`));
  card.append(text);
  redraw();
  return card;
}

function showClassifications(data) {
  const box = document.getElementById("classify-results");
  box.replaceChildren(...data.results.map((r, i) => classificationCard(r, data.prior, i)));
}

// ---- align view ------------------------------------------------------------------------------------

function alignmentCard(result, index) {
  // source words above, target words below, one line per link coloured by its status; long pairs get
  // narrower steps and slanted words; hovering a word keeps its links and names the words it links to
  const card = el("article", { class: "card alignment-card", "data-index": index });
  const n = Math.max(result.source_words.length, result.target_words.length);
  const step = Math.max(16, Math.min(80, Math.floor((room() - 40) / n))), rotate = step < 56, pad = rotate ? 70 : 24;
  const width = n * step + 40, height = 110 + 2 * pad, yTop = pad + 6, yBottom = height - pad - 6;
  const root = svg("svg", { xmlns: SVG, class: "alignment", width, height, viewBox: `0 0 ${width} ${height}` });
  const x = (i) => 20 + i * step + step / 2;
  const lines = svg("g", { class: "align-lines" });
  (result.missed || []).forEach(([s, t]) => lines.append(svg("line", { x1: x(s), y1: yTop + 10, x2: x(t), y2: yBottom - 14, class: "missed", "data-source": s, "data-target": t })));
  result.links.forEach(([s, t], k) => {
    const kind = result.status && result.status.length ? result.status[k] : "predicted";
    lines.append(svg("line", { x1: x(s), y1: yTop + 10, x2: x(t), y2: yBottom - 14, class: `align ${kind}`, "data-status": kind, "data-source": s, "data-target": t }));
  });
  root.append(lines);
  const note = el("p", { class: "score align-note" }, "hover a word to see its links");
  const words = (list, side, y) => list.forEach((w, i) => {
    const attrs = { x: x(i), y, class: `align-word ${side}`, "data-index": i, "text-anchor": rotate ? (side === "source" ? "start" : "end") : "middle" };
    if (rotate) attrs.transform = `rotate(-50 ${x(i)} ${y})`;
    const node = svg("text", attrs, rotate ? short(w, 16) : w);
    const key = side === "source" ? "source" : "target", other = side === "source" ? result.target_words : result.source_words;
    node.addEventListener("mouseenter", () => {
      const hits = [];
      lines.querySelectorAll("line").forEach((line) => {
        const hit = Number(line.dataset[key]) === i;
        line.classList.toggle("dim", !hit);
        if (hit) hits.push(`${other[Number(line.dataset[key === "source" ? "target" : "source"])]} (${line.dataset.status || "missed"})`);
      });
      note.textContent = `${w}: ${hits.length ? hits.join(", ") : "no link (null-aligned)"}`;
    });
    node.addEventListener("mouseleave", () => { lines.querySelectorAll("line").forEach((line) => line.classList.remove("dim")); note.textContent = "hover a word to see its links"; });
    root.append(node);
  });
  words(result.source_words, "source", yTop);
  words(result.target_words, "target", yBottom);
  card.append(el("p", { class: "score" }, `pair ${index + 1}: ${result.links.length} link${result.links.length === 1 ? "" : "s"}`), scrollBox(root), note);
  return card;
}

function showAlignments(data) {
  const box = document.getElementById("align-results");
  const cards = data.results.map((r, i) => alignmentCard(r, i));
  const swatch = (kind, text) => el("span", { class: "legend-item" }, el("span", { class: `swatch link-${kind}` }), ` ${text}`);
  if (data.score) {
    const s = data.score;
    cards.unshift(el("p", { class: "aer" }, `AER ${s.aer}  precision ${s.precision}  recall ${s.recall}  `,
      swatch("sure", "sure"), swatch("possible", "possible"), swatch("wrong", "wrong"), swatch("missed", "missed sure (dashed)")));
  } else {
    cards.unshift(el("p", { class: "aer" }, `${data.results.length} sentence pair${data.results.length === 1 ? "" : "s"}; `, swatch("predicted", "predicted link (no gold links given)")));
  }
  box.replaceChildren(...cards);
}

// ---- compare and notebook views --------------------------------------------------------------------

function showComparisons(data) {
  // two translators of one direction: per sentence both outputs and attentions side by side, most
  // disagreeing first (Python sorted them), with each one's BLEU and entropy and their agreement
  const box = document.getElementById("compare-results");
  const [nameA, nameB] = data.models;
  const summary = el("p", { class: "score compare-summary" }, data.summary);
  const items = data.items.map((item, i) => {
    const article = el("article", { class: "card compare-item", "data-index": i, "data-agreement": item.agreement });
    article.append(el("p", { class: "source" }, item.source), el("p", { class: "score" }, item.metrics));
    const pair = el("div", { class: "compare-pair" });
    [[nameA, item.a], [nameB, item.b]].forEach(([name, result], side) => {
      const column = el("div", { class: "compare-side", "data-model": name });
      column.append(el("h3", {}, name), translationCard(result, 2 * i + side, null, 0.5));
      pair.append(column);
    });
    article.append(pair);
    return article;
  });
  box.replaceChildren(summary, ...items);
}

function addPicker(box) {
  // a notebook's list of results: one card at a time, chosen by its text
  if (!box) return;
  const cards = [...box.querySelectorAll(":scope > article")];
  if (cards.length < 2) return;
  const label = (c, i) => `${i + 1}. ${(c.querySelector(".source, .document, .caption") || c).textContent.slice(0, 80)}`;
  const picker = el("select", { class: "result-picker", "aria-label": "result" }, ...cards.map((c, i) => el("option", { value: i }, label(c, i))));
  const choose = () => cards.forEach((c, i) => { c.hidden = i !== Number(picker.value); });
  picker.addEventListener("change", choose);
  box.prepend(el("label", { class: "row" }, `${cards.length} results: `, picker));
  choose();
}

function showInitial(view) {
  // a notebook's chosen view (matrix, head, model) in every card that offers it
  document.querySelectorAll("select.view-select").forEach((sel) => {
    if ([...sel.options].some((o) => o.value === view)) { sel.value = view; sel.dispatchEvent(new Event("change")); }
  });
}

// ---- wiring ----------------------------------------------------------------------------------------

function showView(name) {
  document.querySelectorAll(".view").forEach((v) => { v.hidden = v.id !== `view-${name}`; });
  document.querySelectorAll("#tabs a").forEach((a) => a.classList.toggle("current", a.dataset.view === name));
}

function fillModels(id, models) {
  const node = document.getElementById(id);
  node.replaceChildren(...models.map((m) => el("option", { value: m.name }, `${m.name} (${m.backend})`)));
}

function fillMaps() {
  // the attention maps that apply to the chosen translator (rollout and flow: Transformers; ...)
  const name = document.getElementById("translate-model").value;
  const chosen = (state.models.translators || []).find((t) => t.name === name) || {};
  const node = document.getElementById("translate-map"), keep = node.value;
  const maps = chosen.attention_maps || ["attention"];
  node.replaceChildren(...maps.map((m) => el("option", { value: m }, m)));
  node.value = maps.includes(keep) ? keep : "attention";
}

function lines(id) {
  return document.getElementById(id).value.split("\n").map((s) => s.trim()).filter((s) => s);
}

function busy(form, promise) {
  // an error replaces the view's stale results with itself, in the results area, not only in the corner
  const button = form.querySelector("button[type=submit]");
  const results = document.getElementById(form.id.replace("-form", "-results"));
  button.disabled = true;
  status("working\u2026");
  return promise.then(() => status("")).catch((e) => {
    status(e.message, true);
    if (results) results.replaceChildren(el("p", { class: "error-block", role: "alert" }, e.message));
  }).finally(() => { button.disabled = false; });
}

function wireForms() {
  document.getElementById("translate-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const beam = Number(document.getElementById("translate-beam").value);
    const body = {
      sentences: lines("translate-input"), beam, n_best: Math.min(Number(document.getElementById("translate-nbest").value), beam),
      model: document.getElementById("translate-model").value || undefined,
      attention_map: document.getElementById("translate-map").value,
    };
    const chosen = (state.models.translators || []).find((t) => t.name === body.model) || (state.models.translators || [])[0];
    busy(event.target, api("/api/translate", body).then((data) => showTranslations(data.results, layerLoader(body, chosen))));
  });
  document.getElementById("classify-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = document.getElementById("classify-input").value;
    const body = { documents: [text], model: document.getElementById("classify-model").value || undefined };
    busy(event.target, api("/api/classify", body).then(showClassifications));
  });
  document.getElementById("align-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const gold = document.getElementById("align-gold").value.trim();
    const body = {
      sources: lines("align-src"), targets: lines("align-tgt"), method: document.getElementById("align-method").value,
      model: document.getElementById("align-model").value || undefined, ...(gold ? { gold } : {}),
    };
    busy(event.target, api("/api/align", body).then(showAlignments));
  });
  document.getElementById("context-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const map = document.getElementById("context-map-request").value;
    const body = {
      text: document.getElementById("context-input").value, model: document.getElementById("context-model").value || undefined,
      rows: document.getElementById("context-rows").value || undefined, maps: map ? [map] : [],
    };
    // a click on a token whose row was not captured asks for it: the same text, that row, every head
    const fetchRow = async (i, layer) => (await api("/api/inspect", { ...body, rows: String(i), layers: String(layer), heads: undefined, maps: [] })).result.captured;
    busy(event.target, api("/api/inspect", body).then((data) => showContext(data.result, fetchRow)));
  });
  [["align-src-file", "align-src"], ["align-tgt-file", "align-tgt"], ["align-gold-file", "align-gold"]].forEach(([file, area]) => {
    document.getElementById(file).addEventListener("change", async (event) => {
      const chosen = event.target.files[0];
      if (chosen) document.getElementById(area).value = await chosen.text();
    });
  });
}

async function start() {
  const tabs = () => showView((location.hash || "#translate").slice(1));
  window.addEventListener("hashchange", tabs);
  const embedded = document.getElementById("attnkit-data");
  if (embedded) {  // a static export: show the embedded results, no server
    const data = JSON.parse(embedded.textContent);
    document.body.classList.add("static");
    if (data.notebook) document.body.classList.add("notebook");
    document.querySelectorAll("form.controls, #tabs").forEach((f) => { f.hidden = true; });
    if (data.limits) state.limits = data.limits;
    showView(data.view);
    (data.results || []).forEach((r) => {  // a notebook's layer maps come as per-mille integers
      if (r.layer_attention_milli) r.layer_attention = r.layer_attention_milli.map((l) => l.map((h) => h.map((row) => row.map((v) => v / 1000))));
    });
    if (data.view === "translate") showTranslations(data.results);
    if (data.view === "classify") showClassifications(data);
    if (data.view === "caption") showCaptions(data.results);
    if (data.view === "heads") showHeads(data.report, "the report");
    if (data.view === "align") showAlignments(data);
    if (data.view === "compare") showComparisons(data);
    if (data.view === "context") showContext(data.result);
    if (data.initial) showInitial(data.initial);
    if (data.picker) addPicker(document.getElementById(`${data.view}-results`));
    if (data.note) status(data.note);
    document.body.dataset.ready = "true";
    return;
  }
  tabs();
  wireForms();
  wireCaption();
  wireHeads();
  try {
    state.models = await api("/api/models");
    state.limits = state.models.classifier_reads;
    fillModels("translate-model", state.models.translators);
    fillMaps();
    document.getElementById("translate-model").addEventListener("change", fillMaps);
    fillModels("align-model", state.models.translators);
    fillModels("classify-model", state.models.classifiers);
    fillModels("caption-model", state.models.captioners || []);
    fillModels("context-model", (state.models.lms || []).map((m) => ({ ...m, backend: `${m.layers} layers x ${m.heads} heads` })));
    document.body.dataset.ready = "true";
  } catch (e) {
    status(`cannot reach the server: ${e.message}`, true);
  }
}

start();
