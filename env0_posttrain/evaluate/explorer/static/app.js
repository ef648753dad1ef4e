/* env0 trajectory explorer: a task list and a per-task view with the arms side by side.
   Every value from the data is rendered with textContent (never innerHTML): model output cannot inject markup. */
"use strict";
(function () {
  const IDX = window.EXPLORER_INDEX;
  const app = document.getElementById("app");
  if (!IDX) { app.textContent = "data/index.js did not load: is the explorer folder complete?"; return; }
  const ARMS = IDX.arms, LABEL = IDX.arm_labels, F = {};
  IDX.arm_fields.forEach(function (f, i) { F[f] = i; });
  const FOLD_CHARS = 800;
  const state = { q: "", suite: "", family: "", template: "", flip: "", fmt: false, unscored: false, outcome: {},
                  sort: "task_id", dir: 1, shown: 300, trial: {} };

  function el(tag, attrs) {
    const node = document.createElement(tag);
    for (const k in (attrs || {})) {
      const v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") node.textContent = String(v);
      else if (k === "cls") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    (function add(kids) {
      kids.forEach(function (c) {
        if (Array.isArray(c)) add(c);
        else if (c !== null && c !== undefined && c !== false) node.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
      });
    })(Array.prototype.slice.call(arguments, 2));
    return node;
  }
  function num(x, d) { return x === null || x === undefined ? "–" : Number(x).toFixed(d === undefined ? 2 : d); }
  function pretty(text) {
    if (typeof text !== "string") return JSON.stringify(text, null, 2);
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
  }
  function folded(text, cls) {
    const body = el("pre", { cls: cls || "", text: text });
    if (text.length <= FOLD_CHARS) return body;
    return el("details", {}, el("summary", { text: text.slice(0, 160).replace(/\s+/g, " ") + "… (" + text.length + " chars)" }), body);
  }
  function armStat(row, arm, f) { const a = row.arms[arm]; return a ? a[F[f]] : null; }
  function outcome(row, arm) {
    const a = row.arms[arm];
    if (!a) return "absent";
    const p = a[F.passes], n = a[F.trials];
    return p === n ? "all" : p === 0 ? "none" : "some";
  }

  // ---- task list -------------------------------------------------------------------------------------------
  function matches(row) {
    if (state.suite && row.suite !== state.suite) return false;
    if (state.family && row.family !== state.family) return false;
    if (state.template && row.template_id !== state.template) return false;
    if (state.flip === "changed" ? !(row.flip === "fail→pass" || row.flip === "pass→fail") : state.flip && row.flip !== state.flip) return false;
    if (state.fmt && !ARMS.some(function (a) { return armStat(row, a, "format_failures") > 0; })) return false;
    if (state.unscored && !ARMS.some(function (a) { return armStat(row, a, "unscored") > 0; })) return false;
    for (const arm in state.outcome) if (state.outcome[arm] && outcome(row, arm) !== state.outcome[arm]) return false;
    if (state.q) {
      const q = state.q.toLowerCase();
      if (row.task_id.toLowerCase().indexOf(q) < 0 && (row.instruction || "").toLowerCase().indexOf(q) < 0) return false;
    }
    return true;
  }
  function sortValue(row, key) {
    if (key.indexOf(":") > 0) {
      const parts = key.split(":"), a = row.arms[parts[0]];
      if (!a) return -Infinity;
      return parts[1] === "rate" ? a[F.passes] / Math.max(1, a[F.trials]) : a[F.mean_reward];
    }
    return row[key] === null || row[key] === undefined ? "" : row[key];
  }
  function select(label, value, options, onchange) {
    const id = "filter-" + label.replace(/[^A-Za-z0-9]+/g, "-").replace(/-+$/, "");
    return el("label", {}, label + " ", el("select", { id: id, onchange: function (e) { onchange(e.target.value); } },
      options.map(function (o) {
        const v = Array.isArray(o) ? o[0] : o, t = Array.isArray(o) ? o[1] : (o || "all");
        return el("option", { value: v, selected: v === value, text: t });
      })));
  }
  function filters(rerender) {
    function set(k) { return function (v) { state[k] = v; state.shown = 300; rerender(); }; }
    const bar = el("div", { cls: "filters" },
      el("input", { type: "search", id: "q", placeholder: "search task id or instruction", value: state.q,
                    oninput: function (e) { state.q = e.target.value; state.shown = 300; rerender(); } }),
      IDX.suites.length ? select("suite", state.suite, [""].concat(IDX.suites), set("suite")) : null,
      select("family", state.family, [""].concat(IDX.families), set("family")),
      select("template", state.template, [""].concat(IDX.templates), set("template")),
      ARMS.indexOf("base") >= 0 && ARMS.indexOf("sft") >= 0 ?
        select("base → adapter", state.flip, [["", "all"], ["fail→pass", "fail → pass"], ["pass→fail", "pass → fail"],
          ["changed", "either flip"], ["both pass", "both pass"], ["both fail", "both fail"]], set("flip")) : null,
      ARMS.map(function (arm) {
        return select(LABEL[arm], state.outcome[arm] || "", [["", "any"], ["all", "all trials pass"],
          ["some", "some pass"], ["none", "none pass"]], function (v) { state.outcome[arm] = v; state.shown = 300; rerender(); });
      }),
      el("label", {}, el("input", { type: "checkbox", id: "fmt", checked: state.fmt,
        onchange: function (e) { state.fmt = e.target.checked; rerender(); } }), " format failures"),
      el("label", {}, el("input", { type: "checkbox", id: "unscored", checked: state.unscored,
        onchange: function (e) { state.unscored = e.target.checked; rerender(); } }), " unscored"));
    return bar;
  }
  function header(text, key) {
    const mark = state.sort === key ? (state.dir > 0 ? " ▲" : " ▼") : "";
    return el("th", { cls: "sortable", text: text + mark, onclick: function () {
      state.dir = state.sort === key ? -state.dir : 1; state.sort = key; renderList(); } });
  }
  function renderRows(tbody, count) {
    const rows = IDX.tasks.filter(matches);
    rows.sort(function (a, b) {
      const x = sortValue(a, state.sort), y = sortValue(b, state.sort);
      return (x < y ? -1 : x > y ? 1 : 0) * state.dir || (a.key - b.key);
    });
    tbody.textContent = "";
    rows.slice(0, state.shown).forEach(function (r) {
      const href = "#task=" + encodeURIComponent(r.task_id) + "&suite=" + encodeURIComponent(r.suite);
      tbody.appendChild(el("tr", { cls: "task-row", onclick: function () { location.hash = href.slice(1); } },
        el("td", {}, el("a", { href: href, text: r.task_id }), el("div", { cls: "instr", text: r.instruction })),
        el("td", { text: r.suite }), el("td", { text: r.family || "–" }), el("td", { text: r.template_id || "–" }),
        ARMS.map(function (arm) {
          const a = r.arms[arm];
          if (!a) return el("td", { cls: "num", text: "–" });
          return el("td", { cls: "num " + outcome(r, arm) },
            a[F.passes] + "/" + a[F.trials], el("span", { cls: "muted", text: " r " + num(a[F.mean_reward]) }),
            a[F.format_failures] ? el("span", { cls: "tag warn", title: "episodes with a format failure", text: "fmt " + a[F.format_failures] }) : null,
            a[F.unscored] ? el("span", { cls: "tag bad", title: "unscored episodes", text: "unscored " + a[F.unscored] }) : null);
        }),
        el("td", { cls: "flip " + (r.flip || "").replace(/[^a-z]/g, ""), text: r.flip || "" })));
    });
    count.textContent = rows.length + " of " + IDX.tasks.length + " tasks" + (rows.length > state.shown ? " (showing " + state.shown + ")" : "");
    return rows.length;
  }
  function renderList() {
    document.title = "Trajectories: " + IDX.run_id;
    const tbody = el("tbody"), count = el("span", { id: "count" });
    const more = el("button", { text: "show 500 more", onclick: function () { state.shown += 500; update(); } });
    function update() { const n = renderRows(tbody, count); more.hidden = n <= state.shown; }
    app.textContent = "";
    app.appendChild(filters(update));
    app.appendChild(el("p", {}, count));
    app.appendChild(el("table", { cls: "tasks" },
      el("thead", {}, el("tr", {}, header("task", "task_id"), header("suite", "suite"), header("family", "family"),
        header("template", "template_id"),
        ARMS.map(function (a) { return header(LABEL[a] + " passes", a + ":rate"); }), el("th", { text: "base → adapter" }))),
      tbody));
    app.appendChild(more);
    update();
    performance.mark("explorer:list");  // bench/explorer_bench.py reads these marks
  }

  // ---- task view -------------------------------------------------------------------------------------------
  function loadTask(key, done) {
    const have = window.EXPLORER_TASKS && window.EXPLORER_TASKS[key];
    if (have) { done(have); return; }
    window.explorerTaskLoaded = function (k) { if (k === key) done(window.EXPLORER_TASKS[k]); };
    const s = document.createElement("script");
    s.src = "data/t" + String(key).padStart(5, "0") + ".js";
    s.onerror = function () { app.textContent = "Could not load " + s.src + "."; };
    document.head.appendChild(s);
  }
  function kv(pairs) {
    return el("dl", { cls: "kv" }, pairs.filter(function (p) { return p[1] !== null && p[1] !== undefined && p[1] !== ""; })
      .map(function (p) { return [el("dt", { text: p[0] }), el("dd", { text: p[1] })]; }));
  }
  function verifierBlock(v) {
    if (!v) return el("div", { cls: "block bad", text: "No verifier result (unscored)." });
    const checks = Object.keys(v.checks), gates = Object.keys(v.gates);
    return el("div", { cls: "block verifier" }, el("h4", { text: "Verifier: reward " + num(v.reward) }),
      checks.length ? el("table", { cls: "checks" }, el("tr", {}, el("th", { text: "check" }), el("th", { text: "score" })),
        checks.map(function (c) { return el("tr", {}, el("td", { text: c }), el("td", { cls: v.checks[c] >= 1 ? "num all" : "num none", text: num(v.checks[c]) })); })) : null,
      gates.length ? el("p", {}, "Safety gates: ", gates.map(function (g) {
        return el("span", { cls: "tag " + (v.gates[g] ? "bad" : "ok"), text: g + (v.gates[g] ? " tripped" : " ok") }); })) : null,
      v.reward_json ? el("div", {}, el("h5", { text: "reward.json (the package's verifier)" }), folded(JSON.stringify(v.reward_json, null, 2)))
        : v.detail ? el("div", {}, el("h5", { text: "details" }), folded(v.detail)) : null);
  }
  function diffBlock(diff) {
    if (diff === null || diff === undefined) return el("div", { cls: "block muted", text: "Workspace diff: not recorded for this episode." });
    if (diff.error) return el("div", { cls: "block bad", text: "Workspace diff failed: " + diff.error });
    const lines = [];
    Object.keys(diff).forEach(function (svc) {
      Object.keys(diff[svc]).forEach(function (table) {
        const t = diff[svc][table], parts = [];
        ["added", "updated", "deleted"].forEach(function (k) {
          if (t[k]) parts.push(k + " " + (Object.keys(t[k]).length + ((t.more || {})[k] || 0)));
        });
        lines.push(svc + "." + table + ": " + parts.join(", "));
      });
    });
    if (!lines.length) return el("div", { cls: "block" }, el("h4", { text: "Workspace diff" }), el("p", { cls: "muted", text: "No change to the workspace." }));
    return el("div", { cls: "block" }, el("h4", { text: "Workspace diff (start → end)" }),
      el("ul", {}, lines.map(function (l) { return el("li", { text: l }); })),
      el("details", {}, el("summary", { text: "rows" }), el("pre", { text: JSON.stringify(diff, null, 2) })));
  }
  function transcript(ep, systems) {
    const turnAt = {};
    ep.turns.forEach(function (t) { turnAt[t.at] = t; });
    const out = [];
    ep.messages.forEach(function (m, i) {
      const t = turnAt[i];
      if (t && t.failed) out.push(el("div", { cls: "msg error", text: "model call failed (" + (t.error_kind || "error") + "): " + t.error }));
      if (m.role === "system") {
        out.push(el("div", { cls: "msg system" }, el("details", {}, el("summary", { text: "system prompt" + (ep.steered ? " (with teacher steering)" : "") }),
          el("pre", { text: systems[m.ref] }))));
        return;
      }
      const card = el("div", { cls: "msg " + m.role }, el("div", { cls: "role", text: m.role + (m.name ? " · " + m.name : "") }));
      if (m.role === "assistant" && t) {
        card.appendChild(el("div", { cls: "turn muted", text: "turn " + t.index + " · " + t.prompt_tokens + " prompt + " + t.completion_tokens +
          " completion tokens · " + num(t.latency_s) + " s" + (t.finish_reason ? " · " + t.finish_reason : "") + (t.attempts > 1 ? " · " + t.attempts + " attempts" : "") }));
      }
      if (m.reasoning_content) card.appendChild(el("details", {}, el("summary", { text: "reasoning" }), el("pre", { text: m.reasoning_content })));
      if (m.content) card.appendChild(m.role === "tool" ? folded(pretty(m.content), "result") : el("pre", { text: m.content }));
      (m.tool_calls || []).forEach(function (c) {
        card.appendChild(el("div", { cls: "call" }, el("div", { cls: "callname", text: "→ " + c.name }), el("pre", { cls: "args", text: pretty(c.arguments) })));
      });
      if (m.role === "tool" && /"ok":\s*false/.test(m.content || "")) card.classList.add("failed");
      out.push(card);
    });
    const last = ep.turns[ep.turns.length - 1];
    if (last && last.failed && last.at >= ep.messages.length) out.push(el("div", { cls: "msg error", text: "model call failed (" + (last.error_kind || "error") + "): " + last.error }));
    return out;
  }
  function episodeBlock(ep, systems) {
    const kinds = Object.keys(ep.errors);
    return el("div", { cls: "episode" },
      kv([["reward", num(ep.reward)], ["stop", ep.stop_condition], ["model", ep.model],
          ["tokens", ep.prompt_tokens + " prompt + " + ep.completion_tokens + " completion"], ["duration", num(ep.duration_s) + " s"],
          ["error", ep.error]]),
      kinds.length ? el("p", {}, "Errors by kind: ", kinds.map(function (k) { return el("span", { cls: "tag warn", text: k + " " + ep.errors[k] }); })) : null,
      verifierBlock(ep.verifier),
      diffBlock(ep.workspace_diff),
      el("h4", { text: "Transcript" }),
      transcript(ep, systems),
      ep.final_answer ? el("div", { cls: "block" }, el("h4", { text: "Final answer" }), el("pre", { text: ep.final_answer })) : null);
  }
  function armColumn(task, arm) {
    const eps = task.episodes[arm], s = task.arms[arm], key = task.key + ":" + arm;
    const col = el("section", { cls: "arm", "data-arm": arm });
    function draw() {
      const pick = Math.min(state.trial[key] || 0, eps.length - 1);
      col.textContent = "";
      col.appendChild(el("h3", {}, LABEL[arm], el("span", { cls: "muted", text: " " + s.passes + "/" + s.trials + " passed · mean reward " + num(s.mean_reward) })));
      col.appendChild(el("div", { cls: "trials" }, eps.map(function (ep, i) {
        return el("button", { cls: "trial " + (ep.passed ? "pass" : "fail") + (i === pick ? " on" : ""),
          text: "trial " + ep.trial + " " + (ep.passed ? "✓" : ep.scored ? "✗" : "?") + " " + num(ep.reward),
          onclick: function () { state.trial[key] = i; draw(); } });
      })));
      col.appendChild(episodeBlock(eps[pick], task.systems));
    }
    draw();
    return col;
  }
  function renderTask(params) {
    const rows = IDX.tasks.filter(function (r) { return r.task_id === params.task && (!params.suite || r.suite === params.suite); });
    if (!rows.length) { app.textContent = ""; app.appendChild(el("p", {}, "No task " + params.task + " in this run. ", el("a", { href: "#", text: "All tasks" }))); return; }
    app.textContent = "";
    app.appendChild(el("p", { text: "Loading " + params.task + "…" }));
    loadTask(rows[0].key, function (task) {
      document.title = task.task_id + " · trajectories";
      app.textContent = "";
      app.appendChild(el("p", {}, el("a", { href: "#", text: "← all tasks" })));
      app.appendChild(el("h2", { text: task.task_id }));
      app.appendChild(kv([["suite", task.suite], ["split", task.split], ["family", task.family], ["template", task.template_id],
        ["difficulty", task.difficulty], ["base → adapter", task.flip]]));
      app.appendChild(el("pre", { cls: "instruction", text: task.instruction }));
      const arms = ARMS.filter(function (a) { return task.episodes[a]; });
      const grid = el("div", { cls: "arms", style: "grid-template-columns: repeat(" + arms.length + ", minmax(380px, 1fr))" });
      arms.forEach(function (a) { grid.appendChild(armColumn(task, a)); });
      app.appendChild(grid);
      window.scrollTo(0, 0);
      performance.measure("explorer:task", "explorer:route");
    });
  }

  function route() {
    performance.clearMarks("explorer:route");
    performance.mark("explorer:route");
    const params = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kvp) {
      const i = kvp.indexOf("=");
      if (i > 0) params[kvp.slice(0, i)] = decodeURIComponent(kvp.slice(i + 1));
    });
    if (params.task) renderTask(params); else renderList();
  }
  const ids = IDX.identifiers || {};
  document.getElementById("run").textContent = "run " + IDX.run_id + (ids.run_spec_digest ? " · spec " + String(ids.run_spec_digest).slice(0, 12) : "") +
    (ids.teacher_model ? " · teacher " + ids.teacher_model : "") + (ids.student_model ? " · student " + ids.student_model : "") +
    " · " + IDX.tasks.length + " tasks";
  window.addEventListener("hashchange", route);
  route();
})();
