// xcsh export: renders the embedded session data; no network, no libraries.
"use strict";
const data = JSON.parse(document.getElementById("xcsh-data").textContent);
let selected = data.leaf;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

function branch(leaf) {
  return data.branches.find((b) => b.leaf === leaf);
}

// The ids from the root to `id`, following each entry's parent (at most one per
// entry, should the links ever loop).
const entryCount = Object.keys(data.parents).length + 1;
function pathTo(id) {
  const path = [];
  for (let at = id; at !== undefined && path.length < entryCount; at = data.parents[at]) {
    path.push(at);
  }
  return path.reverse();
}

function onPath(leaf) {
  return new Set(branch(leaf) ? pathTo(leaf) : []);
}

// The children of every entry, built once (for the branches through a node).
let children = null;
function childrenOf(id) {
  if (children === null) {
    children = new Map();
    for (const [child, parent] of Object.entries(data.parents)) {
      const p = Number(parent);
      if (!children.has(p)) children.set(p, []);
      children.get(p).push(Number(child));
    }
  }
  return children.get(id) || [];
}

// The branch to show when a tree node is clicked: the selected one if it goes
// through the node, else the recorded leaf's, else the first (in file order) that
// does, found among the entries below the node.
function branchThrough(id) {
  if (onPath(selected).has(id)) return selected;
  if (onPath(data.leaf).has(id)) return data.leaf;
  const order = new Map(data.branches.map((b, i) => [b.leaf, i]));
  let best = null;
  const stack = [id];
  while (stack.length) {
    const at = stack.pop();
    if (order.has(at) && (best === null || order.get(at) < order.get(best))) best = at;
    for (const c of childrenOf(at)) stack.push(c);
  }
  return best === null ? selected : best;
}

function renderTree() {
  const root = document.getElementById("tree");
  root.textContent = "";
  const lane = (nodes) => {
    const ul = el("ul");
    for (const n of nodes) {
      const li = el("li");
      const span = el("span", "node", data.tree_lines[n.first]);
      span.dataset.first = n.first;
      span.dataset.last = n.last;
      span.addEventListener("click", () => select(branchThrough(n.first)));
      li.appendChild(span);
      for (const b of n.branches || []) li.appendChild(lane(b));
      ul.appendChild(li);
    }
    return ul;
  };
  root.appendChild(lane(data.tree.root));
}

function renderBranches() {
  const box = document.getElementById("branches");
  box.textContent = "";
  for (const b of data.branches) {
    const button = el("button", "branch", b.title);
    button.dataset.leaf = b.leaf;
    button.addEventListener("click", () => select(b.leaf));
    box.appendChild(button);
  }
}

// Long text (over FOLD_AFTER_LINES lines or FOLD_AFTER_CHARS characters) folded:
// its first and last FOLD_LINES lines (at most FOLD_CHARS characters each) shown,
// the rest in a <details> "N more lines" between them that opens to it in place;
// the page holds the whole text, only the view folds.
const FOLD_AFTER_LINES = 50;
const FOLD_AFTER_CHARS = 8000;
const FOLD_LINES = 20;
const FOLD_CHARS = 3000;

function foldParts(text) {
  const lines = text.split("\n");
  const many = lines.length > FOLD_AFTER_LINES;
  if (!many && text.length <= FOLD_AFTER_CHARS) return null;
  let head = many ? lines.slice(0, FOLD_LINES).join("\n") + "\n" : text;
  let tail = many ? "\n" + lines.slice(-FOLD_LINES).join("\n") : text;
  if (head.length > FOLD_CHARS) head = head.slice(0, FOLD_CHARS).replace(/[\ud800-\udbff]$/, "");
  if (tail.length > FOLD_CHARS) tail = tail.slice(-FOLD_CHARS).replace(/^[\udc00-\udfff]/, "");
  const middle = text.slice(head.length, text.length - tail.length);
  const n = (middle.match(/\n/g) || []).length;
  if (head.endsWith("\n") && tail.startsWith("\n")) {
    // Each line's newline kept, the tail's first with the middle: the parts' text is
    // the whole text (a block's last newline shows no empty line).
    return { head, middle: middle + "\n", tail: tail.slice(1), label: `${(n + 1).toLocaleString("en")} more lines` };
  }
  const chars = `${middle.length.toLocaleString("en")} more characters`;
  return { head, middle, tail, label: n ? `${chars} (${(n + 1).toLocaleString("en")} lines)` : chars };
}

// A block of plain text (class `cls`), folded if long.
function folded(text, cls) {
  const box = el("div", cls);
  const parts = foldParts(text);
  if (!parts) {
    box.textContent = text;
    return box;
  }
  box.classList.add("folded");
  box.appendChild(el("div", "fold-head", parts.head));
  const more = box.appendChild(el("details", "fold"));
  more.appendChild(el("summary", null, parts.label));
  more.appendChild(el("div", "fold-middle", parts.middle));
  box.appendChild(el("div", "fold-tail", parts.tail));
  return box;
}

// Markdown, as models write it: ATX headings, paragraphs, fenced code, block quotes,
// lists (nested by indentation), GFM tables, rules; inline code, emphasis, strike,
// links. Session content is untrusted: the DOM is built with createElement and
// textContent only, with attributes from a fixed few, and a link is an <a> only for
// an http(s) URL; raw HTML and whatever else the renderer does not know is text.
const MD = {
  fence: /^( {0,3})(`{3,}|~{3,})(.*)$/,
  close: /^ *(`{3,}|~{3,})[ \t]*$/,
  heading: /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/,
  rule: /^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$/,
  quote: /^ {0,3}> ?(.*)$/,
  item: /^( *)([-+*]|\d{1,9}[.)])(?:([ \t]+)(.*))?$/,
  delimiter: /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/,
  depth: 16,
};
const PUNCT = /[!-\/:-@\[-`{-~]/;
const UNI_PUNCT = /[\p{P}\p{S}]/u;
const SPACE = /\s/;
const ENTITIES = { amp: 38, lt: 60, gt: 62, quot: 34, apos: 39, nbsp: 160 };
const HTTP = /^https?:\/\/[^\s\x00-\x1f\x7f]+$/i;

function markdown(text, cls) {
  const box = el("div", cls);
  try {
    const lines = text.replace(/\r\n?/g, "\n").split("\n")
      .map((l) => l.replace(/^[ \t]+/, (ws) => ws.replace(/\t/g, "    ")));
    blocks(lines, box, 0);
  } catch (e) {
    // A renderer bug must not cost the text: shown as it is.
    box.textContent = text;
    box.classList.add("raw");
  }
  return box;
}

const blank = (line) => /^\s*$/.test(line);
const indentOf = (line) => line.length - line.trimStart().length;
const dedent = (line, n) => line.replace(new RegExp(`^ {0,${n}}`), "");

function fenceOpen(line) {
  const m = MD.fence.exec(line);
  return m && !(m[2][0] === "`" && m[3].includes("`")) ? m : null;
}

function fenceCloses(open, line) {
  const m = MD.close.exec(line);
  return m !== null && m[1][0] === open[0] && m[1].length >= open.length;
}

function tableAt(lines, i) {
  return i + 1 < lines.length && lines[i].includes("|") && lines[i + 1].includes("|")
    && MD.delimiter.test(lines[i + 1]) && cells(lines[i]).length === cells(lines[i + 1]).length;
}

function startsBlock(lines, i) {
  const l = lines[i];
  return fenceOpen(l) !== null || MD.heading.test(l) || MD.rule.test(l) || MD.quote.test(l)
    || MD.item.test(l) || tableAt(lines, i);
}

function blocks(lines, parent, depth) {
  if (depth > MD.depth) {
    parent.appendChild(el("p", "raw", lines.join("\n")));
    return;
  }
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (blank(line)) {
      i++;
    } else if ((m = fenceOpen(line))) {
      i = fence(lines, i, m, parent);
    } else if ((m = MD.heading.exec(line))) {
      inline((m[2] || "").replace(/(?:^|[ \t]+)#+$/, ""), parent.appendChild(el("h" + m[1].length)));
      i++;
    } else if (MD.rule.test(line)) {
      parent.appendChild(el("hr"));
      i++;
    } else if (MD.quote.test(line)) {
      i = quote(lines, i, parent, depth);
    } else if (MD.item.test(line)) {
      i = list(lines, i, parent, depth);
    } else if (tableAt(lines, i)) {
      i = table(lines, i, parent);
    } else {
      const text = [line.trim()];
      for (i++; i < lines.length && !blank(lines[i]) && !startsBlock(lines, i); i++) text.push(lines[i].trim());
      inline(text.join("\n"), parent.appendChild(el("p")));
    }
  }
}

function fence(lines, i, m, parent) {
  const body = [];
  for (i++; i < lines.length; i++) {
    if (fenceCloses(m[2], lines[i])) {
      i++;
      break;
    }
    body.push(dedent(lines[i], m[1].length));
  }
  const pre = parent.appendChild(el("pre"));
  const code = pre.appendChild(el("code", null, body.join("\n")));
  const lang = m[3].trim().split(/\s+/)[0].replace(/^\{?\.?/, "").replace(/\}$/, "");
  if (/^[\w+#.-]{1,40}$/.test(lang)) {
    code.className = "language-" + lang;
    pre.setAttribute("data-lang", lang);
  }
  return i;
}

function quote(lines, i, parent, depth) {
  const inner = [];
  let m;
  while (i < lines.length) {
    if ((m = MD.quote.exec(lines[i]))) {
      inner.push(m[1]);
    } else if (!blank(lines[i]) && !blank(inner[inner.length - 1]) && !startsBlock(lines, i)) {
      inner.push(lines[i]); // a lazy continuation of the quoted paragraph
    } else {
      break;
    }
    i++;
  }
  blocks(inner, parent.appendChild(el("blockquote")), depth + 1);
  return i;
}

// A list: its items are the marker lines at (or left of) the first one's indent and
// of its kind; a line indented further belongs to the item above it (a nested list,
// a continued paragraph, a code block), dedented by the item's content indent.
function list(lines, i, parent, depth) {
  const first = MD.item.exec(lines[i]);
  const ordered = /\d/.test(first[2]);
  const base = first[1].length;
  const box = parent.appendChild(el(ordered ? "ol" : "ul"));
  const start = parseInt(first[2], 10);
  if (ordered && start !== 1) box.setAttribute("start", String(start));
  const sibling = (line) => {
    const m = MD.item.exec(line);
    return m !== null && m[1].length <= base && /\d/.test(m[2]) === ordered ? m : null;
  };
  while (i < lines.length) {
    if (blank(lines[i])) {
      let j = i;
      while (j < lines.length && blank(lines[j])) j++;
      if (j === lines.length || !sibling(lines[j])) break;
      i = j;
    }
    const m = sibling(lines[i]);
    if (!m) break;
    const spaces = m[3] ? m[3].length : 1;
    const width = m[1].length + m[2].length + (spaces > 4 ? 1 : spaces);
    const task = /^\[[ xX]\][ \t]+/.test(m[4] || "");
    const item = [(m[4] || "").replace(/^\[([ xX])\][ \t]+/, (_, x) => (x === " " ? "☐ " : "☑ "))];
    let open = fenceOpen(item[0]);
    for (i++; i < lines.length; i++) {
      const line = lines[i];
      if (open) {
        const inner = dedent(line, width);
        item.push(inner);
        if (fenceCloses(open[2], inner)) open = null;
      } else if (blank(line)) {
        let j = i;
        while (j < lines.length && blank(lines[j])) j++;
        if (j === lines.length || indentOf(lines[j]) <= base) break;
        item.push(line);
      } else if (indentOf(line) > base) {
        const inner = dedent(line, Math.min(indentOf(line), width));
        item.push(inner);
        open = fenceOpen(inner);
      } else if (!blank(item[item.length - 1]) && !startsBlock(lines, i)) {
        item.push(line); // a lazy continuation of the item's paragraph
      } else {
        break;
      }
    }
    blocks(item, box.appendChild(el("li", task ? "task" : null)), depth + 1);
  }
  return i;
}

function cells(line) {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  const out = [];
  let cur = "";
  for (let k = 0; k < s.length; k++) {
    if (s[k] === "\\" && s[k + 1] === "|") {
      cur += "|";
      k++;
    } else if (s[k] === "|") {
      out.push(cur.trim());
      cur = "";
    } else {
      cur += s[k];
    }
  }
  out.push(cur.trim());
  return out;
}

function table(lines, i, parent) {
  const head = cells(lines[i]);
  const align = cells(lines[i + 1]).map((d) =>
    d.startsWith(":") && d.endsWith(":") ? "al-center" : d.endsWith(":") ? "al-right" : null);
  const wrap = parent.appendChild(el("div", "table"));
  const t = wrap.appendChild(el("table"));
  const row = (section, tag, values) => {
    const tr = section.appendChild(el("tr"));
    head.forEach((_, k) => inline(values[k] || "", tr.appendChild(el(tag, align[k]))));
  };
  row(t.appendChild(el("thead")), "th", head);
  const body = t.appendChild(el("tbody"));
  for (i += 2; i < lines.length && !blank(lines[i]) && lines[i].includes("|"); i++) row(body, "td", cells(lines[i]));
  return i;
}

// Inline Markdown into `parent`: code spans, links (not inside a link's text),
// emphasis; a line break stays one.
function inline(text, parent, links = true) {
  const nodes = [];
  let buf = "";
  const flush = () => {
    if (buf) nodes.push({ dom: document.createTextNode(buf) });
    buf = "";
  };
  const put = (dom) => {
    flush();
    nodes.push({ dom });
  };
  const noCloser = new Set();
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "\\" && i + 1 < text.length && PUNCT.test(text[i + 1])) {
      buf += text[i + 1];
      i += 2;
      continue;
    }
    if (c === "\n" || (c === "\\" && text[i + 1] === "\n")) {
      put(el("br"));
      i += c === "\n" ? 1 : 2;
      continue;
    }
    if (c === "&") {
      const m = /^&(?:(amp|lt|gt|quot|apos|nbsp)|#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6}));/.exec(text.slice(i, i + 12));
      const code = m && (m[1] ? ENTITIES[m[1]] : parseInt(m[2] || m[3], m[2] ? 10 : 16));
      if (code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)) {
        buf += String.fromCodePoint(code);
        i += m[0].length;
        continue;
      }
    }
    if (c === "`") {
      let n = 1;
      while (text[i + n] === "`") n++;
      const end = noCloser.has(n) ? -1 : closingTicks(text, i + n, n);
      if (end < 0) {
        noCloser.add(n);
        buf += text.slice(i, i + n);
      } else {
        let code = text.slice(i + n, end).replace(/\n/g, " ");
        if (/^ [^]* $/.test(code) && code.trim()) code = code.slice(1, -1);
        put(el("code", null, code));
      }
      i = end < 0 ? i + n : end + n;
      continue;
    }
    if (links && (c === "[" || (c === "!" && text[i + 1] === "["))) {
      const l = linkAt(text, c === "!" ? i + 1 : i);
      if (l) {
        put(c === "!" ? imageNode(l.label, l.url) : linkNode(l.label, l.url));
        i = l.end;
        continue;
      }
    }
    if (links && c === "<") {
      const m = /^<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*)>/.exec(text.slice(i, i + 2048));
      if (m) {
        put(linkNode(m[1], m[1]));
        i += m[0].length;
        continue;
      }
    }
    if (links && (c === "h" || c === "H") && !/[A-Za-z0-9]/.test(text[i - 1] || "")) {
      const m = /^https?:\/\/[^\s<>]+/i.exec(text.slice(i, i + 2048));
      if (m) {
        let url = m[0];
        const unbalanced = () => url.endsWith(")") && url.split("(").length < url.split(")").length;
        while (/[.,:;!?'"*_~]$/.test(url) || unbalanced()) url = url.slice(0, -1);
        put(linkNode(url, url));
        i += url.length;
        continue;
      }
    }
    if (c === "*" || c === "_" || c === "~") {
      let n = 1;
      while (text[i + n] === c) n++;
      const before = i > 0 ? text[i - 1] : " ";
      const after = i + n < text.length ? text[i + n] : " ";
      const pb = UNI_PUNCT.test(before), pa = UNI_PUNCT.test(after);
      const left = !SPACE.test(after) && (!pa || SPACE.test(before) || pb);
      const right = !SPACE.test(before) && (!pb || SPACE.test(after) || pa);
      const open = c === "_" ? left && (!right || pb) : left;
      const close = c === "_" ? right && (!left || pa) : right;
      flush();
      nodes.push({ d: c, n, orig: n, open, close });
      i += n;
      continue;
    }
    buf += c;
    i++;
  }
  flush();
  emphasis(nodes);
  for (const x of nodes) append(parent, x);
}

function append(parent, x) {
  if (x.dom) parent.appendChild(x.dom);
  else if (x.n > 0) parent.appendChild(document.createTextNode(x.d.repeat(x.n)));
}

// The index of the run of exactly `n` backticks closing a code span, or -1.
function closingTicks(text, from, n) {
  for (let k = text.indexOf("`", from); k >= 0; k = text.indexOf("`", k)) {
    let m = 1;
    while (text[k + m] === "`") m++;
    if (m === n) return k;
    k += m;
  }
  return -1;
}

// CommonMark's delimiter runs, simplified: each closer takes the nearest opener of
// its character (`**`, `__` strong; `*`, `_` emphasis; `~~` strike), the nodes
// between become the element's children.
function emphasis(nodes) {
  const bottom = new Map();
  for (let c = 0; c < nodes.length; c++) {
    const cl = nodes[c];
    if (!cl.d || !cl.close || cl.n === 0) continue;
    const key = cl.d + (cl.open ? "o" : "") + (cl.orig % 3);
    const floor = bottom.has(key) ? bottom.get(key) : -1;
    let o = c - 1;
    for (; o > floor; o--) {
      const op = nodes[o];
      if (op.d !== cl.d || !op.open || op.n === 0) continue;
      if (cl.d === "~") {
        if (op.n === 2 && cl.n === 2) break;
        continue;
      }
      if ((op.close || cl.open) && (op.orig + cl.orig) % 3 === 0 && !(op.orig % 3 === 0 && cl.orig % 3 === 0)) continue;
      break;
    }
    if (o <= floor) {
      bottom.set(key, c - 1);
      continue;
    }
    const op = nodes[o];
    const use = cl.d === "~" ? 2 : op.n >= 2 && cl.n >= 2 ? 2 : 1;
    const wrap = el(cl.d === "~" ? "del" : use === 2 ? "strong" : "em");
    for (const x of nodes.slice(o + 1, c)) append(wrap, x);
    op.n -= use;
    cl.n -= use;
    nodes.splice(o + 1, c - o - 1, { dom: wrap });
    for (const [k, b] of bottom) if (b >= o) bottom.set(k, o - 1);
    c = o + 1;
  }
}

// `[label](url "title")` at `i` (a `[`): the label, the URL and the index after it.
function linkAt(text, i) {
  const limit = Math.min(text.length, i + 4000);
  let depth = 0;
  let k = i;
  for (; k < limit; k++) {
    const ch = text[k];
    if (ch === "\\") k++;
    else if (ch === "[") depth++;
    else if (ch === "]" && --depth === 0) break;
  }
  if (k >= limit || text[k + 1] !== "(") return null;
  const label = text.slice(i + 1, k);
  const gap = (p) => {
    while (text[p] === " " || text[p] === "\n") p++;
    return p;
  };
  let p = gap(k + 2);
  let url;
  if (text[p] === "<") {
    const e = text.indexOf(">", p);
    if (e < 0 || text.slice(p, e).includes("\n")) return null;
    url = text.slice(p + 1, e);
    p = e + 1;
  } else {
    const s = p;
    for (let par = 0; p < limit; p++) {
      const ch = text[p];
      if (ch === "\\" && PUNCT.test(text[p + 1] || "")) p++;
      else if (SPACE.test(ch)) break;
      else if (ch === "(") par++;
      else if (ch === ")" && par-- === 0) break;
    }
    url = text.slice(s, p);
  }
  p = gap(p);
  if (text[p] === '"' || text[p] === "'" || text[p] === "(") {
    const e = text.indexOf(text[p] === "(" ? ")" : text[p], p + 1);
    if (e < 0) return null;
    p = gap(e + 1);
  }
  if (text[p] !== ")") return null;
  return { label, url: url.replace(/\\([!-\/:-@\[-`{-~])/g, "$1"), end: p + 1 };
}

// A link: its text, an <a> only for an http(s) URL, and the URL shown after it
// unless the text is the URL.
function linkNode(label, url) {
  const box = el("span", "link");
  const text = box.appendChild(el(HTTP.test(url) ? "a" : "span"));
  if (text.tagName === "A") {
    text.setAttribute("href", url);
    text.setAttribute("rel", "noopener noreferrer");
    text.setAttribute("target", "_blank");
  }
  inline(label, text, false);
  if (url && label.trim() !== url) box.appendChild(el("span", "url", ` (${url})`));
  return box;
}

// An image is never loaded (the page makes no request): its alt text and URL.
function imageNode(label, url) {
  const box = el("span", "link image", `[image: ${label}]`);
  if (url) box.appendChild(el("span", "url", ` (${url})`));
  return box;
}

function item(it) {
  const box = el("div", "item");
  const head = (text) => box.appendChild(el("div", "head", text));
  const body = (text, cls) => box.appendChild(el("div", "body" + (cls ? " " + cls : ""), text));
  switch (it.kind) {
    case "session":
      box.classList.add("machine");
      head(`session ${it.session_id} in ${it.cwd}` + (it.forked_from ? ` · forked from ${it.forked_from}` : ""));
      break;
    case "user":
      box.classList.add("user");
      head(it.origin === "prompt" ? `user #${it.entry}` : `${it.origin.replace("_", "-")} #${it.entry} (delivered, arrived as #${it.queued})`);
      box.appendChild(folded(it.text, "body"));
      break;
    case "queued":
      box.classList.add("machine");
      head(`${it.origin.replace("_", "-")} arrived #${it.entry}: ${it.text}`);
      break;
    case "assistant": {
      box.classList.add("assistant");
      let h = `assistant #${it.entry} · step ${it.step} · ${it.usage.input_tokens} in / ${it.usage.output_tokens} out`;
      if (it.outcome !== "completed") h += ` · ${it.outcome}`;
      head(h);
      if (it.reasoning) box.appendChild(folded(`(reasoning, ${it.reasoning_chars} chars) ${it.reasoning}`, "body reasoning"));
      if (it.text) box.appendChild(markdown(it.text, "body md"));
      for (const c of it.tool_calls) box.appendChild(folded(`→ ${c.name} ${c.id} ${c.arguments}`, "call"));
      break;
    }
    case "tool_result":
      if (data.plans[it.entry]) {
        box.classList.add("plan");
        head(`plan updated #${it.entry} · ${it.call_id}`);
        box.appendChild(checklist(data.plans[it.entry]));
        break;
      }
      box.classList.add("result");
      if (it.status !== "ok") box.classList.add("error");
      head(`← ${it.name} ${it.call_id} #${it.entry} · ` + (it.synthetic ? `not run: ${it.synthetic}` : `${it.status} · ${it.duration_ms} ms`));
      if (it.content) box.appendChild(folded(it.content, "body"));
      for (const p of it.changed || []) body(`changed ${p}`, "reasoning");
      break;
    case "approval":
      box.classList.add("machine");
      head(`approval #${it.entry}: ${it.tool} ${it.call_id} ${it.verdict} by ${it.by}`);
      break;
    case "approval_answer":
      box.classList.add("machine");
      head(`the user answered #${it.entry}: ${it.call_id} ${it.verdict} (${it.scope})`);
      break;
    case "compaction":
      box.classList.add("machine");
      head(`compacted #${it.entry}: ${it.tokens_before} → ${it.tokens_after} tokens, kept from #${it.first_kept}`);
      box.appendChild(markdown(it.summary, "body md"));
      break;
    case "run_finished":
      box.classList.add("machine");
      head(`run finished #${it.entry}: ${it.reason} · ${it.steps} step(s) · ${it.tokens} tokens`);
      break;
    case "branch":
      box.classList.add("machine");
      head(`branch #${it.entry}: continues here (the leaf was #${it.from_leaf})`);
      break;
    case "label":
      box.classList.add("machine");
      head(`label #${it.entry} on #${it.target}: ${it.name}`);
      break;
    default: {
      box.classList.add("machine");
      const rest = Object.entries(it).filter(([k]) => k !== "kind" && k !== "entry").map(([k, v]) => `${k}: ${v}`).join(" · ");
      head(`${it.kind.replace("_", " ")} #${it.entry}` + (rest ? ` · ${rest}` : ""));
    }
  }
  return box;
}

// The task plan as a checklist: `[x]` completed, `[>]` in progress, `[ ]` pending.
function checklist(plan) {
  const box = el("div", "checklist");
  if (plan.explanation) box.appendChild(el("div", "body", plan.explanation));
  const marks = { completed: "[x]", in_progress: "[>]", pending: "[ ]" };
  for (const i of plan.items) box.appendChild(el("div", "plan-" + i.status, `${marks[i.status]} ${i.text}`));
  if (plan.items.length === 0) box.appendChild(el("div", "plan-pending", "(no items)"));
  return box;
}

function renderConversation() {
  const box = document.getElementById("conversation");
  box.textContent = "";
  const b = branch(selected);
  document.getElementById("branch-title").textContent = b ? b.title : "";
  // The plan at the selected branch's leaf: its last update on the path.
  const path = b ? pathTo(b.leaf) : [];
  const last = path.filter((id) => data.plans[id]).pop();
  if (last !== undefined) {
    const p = el("div", "item plan");
    p.appendChild(el("div", "head", `plan at the leaf (from #${last})`));
    p.appendChild(checklist(data.plans[last]));
    box.appendChild(p);
  }
  for (const id of path) {
    const it = data.items[id];
    if (it) box.appendChild(item(it));
    for (const l of data.labels[id] || []) box.appendChild(item(l));
  }
}

function renderTimeline() {
  const body = document.getElementById("timeline-rows");
  const only = document.getElementById("only-branch").checked;
  const path = onPath(selected);
  body.textContent = "";
  for (const r of data.timeline) {
    const tr = el("tr");
    const on = path.has(r.entry);
    if (!on) tr.classList.add(only ? "hidden" : "off");
    for (const [v, cls] of [[r.seq, "num"], ["#" + r.entry, "num"], ["+" + r.t_ms + "ms", "num"], [r.step ?? "-", "num"], [r.lane, "lane-" + r.lane], [r.kind, ""], [r.detail, ""]]) {
      tr.appendChild(el("td", cls, String(v)));
    }
    body.appendChild(tr);
  }
}

function select(leaf) {
  selected = leaf;
  const path = onPath(leaf);
  for (const b of document.querySelectorAll("button.branch")) {
    b.classList.toggle("selected", Number(b.dataset.leaf) === leaf);
  }
  for (const n of document.querySelectorAll(".node")) {
    const on = path.has(Number(n.dataset.first));
    n.classList.toggle("on", on);
    n.classList.toggle("off", !on);
  }
  renderConversation();
  renderTimeline();
}

document.getElementById("only-branch").addEventListener("change", renderTimeline);
renderTree();
renderBranches();
select(selected);
