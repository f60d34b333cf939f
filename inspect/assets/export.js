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
      body(it.text);
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
      if (it.reasoning) body(`(reasoning, ${it.reasoning_chars} chars) ${it.reasoning}`, "reasoning");
      if (it.text) body(it.text);
      for (const c of it.tool_calls) box.appendChild(el("div", "call", `→ ${c.name} ${c.id} ${c.arguments}`));
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
      if (it.content) body(it.content);
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
      body(it.summary);
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
