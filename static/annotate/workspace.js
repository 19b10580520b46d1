// The refinement workspace: autosave (every few seconds and on blur), stale-version handling that loses
// nothing typed, activity pings, answer-item editing, and keyboard shortcuts. Talks to the JSON API.
(function () {
  "use strict";
  const root = document.getElementById("workspace");
  if (!root) return;
  const form = document.getElementById("refine-form");
  const state = document.getElementById("save-state");
  const csrf = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"];
  const storageKey = "tatcurate-unsaved-" + root.dataset.instance;
  let version = Number(root.dataset.version);
  let dirty = false;
  let saving = null;
  let lastActivity = Date.now();
  let gone = false;  // the instance is no longer this person's (lease reaped, taken back): nothing more is sent

  // The scale select's "" is "not chosen" (stored null) and "none" the scale None (stored ""): see answer_types.py.
  const scaleStored = (choice) => (choice === "" ? null : choice === "none" ? "" : choice);

  function collect() {
    const data = new FormData(form);
    const typeSelect = document.getElementById("f-type");
    const fields = {
      question: data.get("question") || "",
      rationale: data.get("rationale") || "",
      answer: data.get("unanswerable") ? [] : data.getAll("answer").map(String),
      answer_form: data.get("answer_form") || "",
      answer_source: data.get("answer_source") || "",
      answer_type: data.get("answer_type") || "",
      scale: scaleStored(data.get("scale") || ""),
      relevant_table_ids: data.getAll("relevant_table_ids").map(Number),
      excluded_table_ids: [...document.querySelectorAll(".exclude-table:checked")].map((e) => Number(e.value)),
      excluded_paragraph_ids: [...document.querySelectorAll(".exclude-paragraph:checked")].map((e) => Number(e.value)),
      reasoning_type_id: typeSelect.value ? Number(typeSelect.value) : null,
      is_answerable: !data.get("unanswerable"),
      unanswerable_reason: data.get("unanswerable_reason") || "",
    };
    const note = document.getElementById("f-type-reason").value.trim();
    if (note) fields.note = note;
    return fields;
  }

  function setState(text, cls) {
    state.textContent = text;
    state.className = cls || "muted";
  }

  function showProblems(problems) {
    const list = document.getElementById("problems");
    list.innerHTML = "";
    for (const p of problems || []) {
      const li = document.createElement("li");
      li.dataset.field = p.field;
      li.textContent = p.message;
      list.appendChild(li);
    }
  }

  async function post(url, body) {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
      credentials: "same-origin",
      body: JSON.stringify(body),
    });
    let payload = null;
    try { payload = await response.json(); } catch (e) { payload = null; }
    return { status: response.status, payload };
  }

  function conflict() {
    localStorage.setItem(storageKey, JSON.stringify({ base: loaded, mine: collect() }));
    document.getElementById("conflict-banner").hidden = false;
    setState("Changed elsewhere", "error");
  }

  // The server refused because this person no longer holds the instance (the lease ran out and it went back to
  // the queue): keep what they typed since the last save — in the form, read-only so nothing more is typed into
  // a dead end, and in this browser, so it is put back if the instance comes back to them — and say so.
  function lost(detail) {
    if (gone) return;
    gone = true;
    if (dirty) localStorage.setItem(storageKey, JSON.stringify({ base: loaded, mine: collect() }));
    form.querySelectorAll("input, textarea, select, button").forEach((control) => {
      if (control.matches("textarea, input[type=text], input:not([type])")) control.readOnly = true;
      else control.disabled = true;
    });
    document.getElementById("lost-text").textContent = detail || "You do not hold this instance any more.";
    document.getElementById("lost-unsaved").hidden = !dirty;
    document.getElementById("lost-banner").hidden = false;
    setState(dirty ? "Not saved: this instance is no longer yours" : "This instance is no longer yours", "error");
  }

  async function save() {
    if (gone) return false;
    if (saving) return saving;
    if (!dirty) return true;
    const fields = collect();
    if (fields.reasoning_type_id !== (document.getElementById("f-type").dataset.original ? Number(document.getElementById("f-type").dataset.original) : null) && !fields.note) {
      delete fields.reasoning_type_id;  // a type change waits for its reason
    }
    dirty = false;
    setState("Saving…");
    saving = post(root.dataset.api, { expected_version: version, ...fields }).then(({ status, payload }) => {
      saving = null;
      if (status === 200) {
        version = payload.instance.version;
        root.dataset.version = String(version);
        showProblems(payload.problems);
        document.getElementById("form-hint").textContent = payload.suggested_form ? "suggested: " + payload.suggested_form : "";
        showHint("type-hint", payload.suggested_type, payload.suggested_type_evidence, Boolean(payload.suggested_type));
        showHint("scale-hint", payload.suggested_scale, payload.suggested_scale_evidence, payload.suggested_scale !== null);
        loaded = { ...loaded, ...fields };
        localStorage.removeItem(storageKey);
        // A change made while this save was in flight is not in it: say so, and save it next.
        if (dirty) { setState("Unsaved changes", "warn"); setTimeout(save, 0); } else setState("All changes saved", "ok");
        if (window.htmx && !document.getElementById("diff-container").hidden) {
          htmx.ajax("GET", root.dataset.diff, { target: "#diff-panel", swap: "outerHTML" });
        }
        return true;
      }
      dirty = true;
      if (status === 409) { conflict(); return false; }
      if (status === 403) { lost(payload && payload.detail); return false; }
      setState((payload && payload.detail) || "Could not save (" + status + ")", "error");
      return false;
    }).catch(() => { saving = null; dirty = true; setState("Offline — will retry", "warn"); return false; });
    return saving;
  }

  // Wait for any save in flight, then save again until nothing is left unsaved.
  async function flush() {
    for (;;) {
      if (saving) await saving;
      if (!dirty) return true;
      if (!(await save())) return false;
    }
  }

  async function submit() {
    if (gone || !(await flush())) return;
    setState("Submitting…");
    const { status, payload } = await post(root.dataset.submit, { expected_version: version });
    if (status === 200) {
      setState("Submitted", "ok");
      const next = document.createElement("form");
      next.method = "post";
      next.action = root.dataset.next;
      // `submitted` names this instance, so the next page confirms the submission.
      next.innerHTML = '<input type="hidden" name="csrfmiddlewaretoken" value="' + csrf + '">'
        + '<input type="hidden" name="submitted" value="' + root.dataset.instance + '">';
      document.body.appendChild(next);
      next.submit();
      return;
    }
    if (status === 409) { conflict(); return; }
    if (status === 403) { lost(payload && payload.detail); return; }
    showProblems((payload && payload.problems) || []);
    setState((payload && payload.detail) || "Could not submit", "error");
  }

  // The suggested answer type / scale: a button that applies it, hidden when there is nothing to suggest.
  // A suggestion shows its evidence; without evidence (value null, or "" for the type) there is nothing to apply.
  function showHint(id, value, evidence, isSuggested) {
    const hint = document.getElementById(id);
    hint.dataset.value = value || "";
    hint.textContent = "suggested: " + (value || "none");
    hint.hidden = !isSuggested;
    document.getElementById(id.replace("-hint", "-evidence")).textContent = evidence || "";
  }

  function markDirty() { dirty = true; lastActivity = Date.now(); setState("Unsaved changes", "warn"); }

  function itemRow(value) {
    const row = document.createElement("div");
    row.className = "answer-item";
    row.innerHTML = '<input name="answer" aria-label="Answer item"><button type="button" class="link up" title="Move up">↑</button><button type="button" class="link remove" title="Remove">✕</button>';
    row.querySelector("input").value = value || "";
    return row;
  }

  // Keyboard helpers: focus a radio group's chosen radio, focus the n-th relevant-table box.
  function focusRadio(name) {
    const radios = [...form.querySelectorAll(`input[name=${name}]`)];
    const target = radios.find((radio) => radio.checked) || radios[0];
    if (target) target.focus();
  }


  // Focus only, as every Alt shortcut: Space then marks or unmarks the table, a change the annotator sees made.
  function focusTable(index) {
    const boxes = form.querySelectorAll("input[name=relevant_table_ids]");
    if (boxes[index]) boxes[index].focus();
  }

  function addItem() {
    const row = itemRow("");
    document.getElementById("answer-items").appendChild(row);
    row.querySelector("input").focus();
    markDirty();
  }

  function apply(name, value) {
    if (name === "question" || name === "rationale" || name === "unanswerable_reason") { form[name].value = value; return; }
    if (name === "is_answerable") { form.unanswerable.checked = !value; showAnswerability(); return; }
    if (name === "answer") {
      const box = document.getElementById("answer-items");
      box.querySelectorAll(".answer-item").forEach((e) => e.remove());
      for (const item of value) box.appendChild(itemRow(item));
      return;
    }
    if (name === "scale") { form.scale.value = value === null || value === undefined ? "" : value || "none"; return; }
    if (name === "answer_form" || name === "answer_source" || name === "answer_type") {
      form.querySelectorAll(`input[name=${name}]`).forEach((radio) => { radio.checked = radio.value === value; });
      return;
    }
    if (name === "relevant_table_ids") {
      form.querySelectorAll("input[name=relevant_table_ids]").forEach((box) => { box.checked = value.includes(Number(box.value)); });
    }
  }

  // After a "changed elsewhere" reload, re-apply only what this person changed (a three-way merge),
  // so their typing survives and the other change is kept where they did not touch it.
  let loaded = collect();  // the last state the server is known to hold
  const unsaved = localStorage.getItem(storageKey);
  if (unsaved) {
    const { base, mine } = JSON.parse(unsaved);
    for (const name of ["question", "rationale", "answer", "answer_form", "answer_source", "answer_type", "scale", "relevant_table_ids", "is_answerable", "unanswerable_reason"]) {
      if (JSON.stringify(mine[name]) !== JSON.stringify(base[name])) apply(name, mine[name]);
    }
    localStorage.removeItem(storageKey);
    markDirty();
    setState("Your unsaved changes were re-applied on the current version", "warn");
  }

  // "Not answerable" asks for the reason (the submission guard requires it) and leaves the answer empty.
  const unanswerableBox = document.getElementById("f-unanswerable");
  function showAnswerability() {
    const off = !document.getElementById("f-unanswerable").checked;
    document.getElementById("f-unanswerable-reason").hidden = off;
    document.getElementById("unanswerable-reason-label").hidden = off;
    // The answer items step aside (kept in the page, so unticking brings them back) and are not sent meanwhile.
    const items = document.getElementById("answer-items");
    items.disabled = !off;
    items.hidden = !off;
  }
  unanswerableBox.addEventListener("change", showAnswerability);
  showAnswerability();

  form.addEventListener("input", markDirty);
  form.addEventListener("change", markDirty);
  form.addEventListener("focusout", () => { if (dirty) save(); });
  document.querySelectorAll(".exclude-table, .exclude-paragraph").forEach((box) => box.addEventListener("change", (e) => {
    e.target.closest(".ws-table, .paragraph").classList.toggle("excluded", e.target.checked);
    markDirty();
    save();
  }));
  document.getElementById("f-type").addEventListener("change", (e) => {
    document.getElementById("f-type-reason").hidden = e.target.value === e.target.dataset.original;
  });
  document.getElementById("answer-items").addEventListener("click", (e) => {
    const row = e.target.closest(".answer-item");
    if (!row) return;
    if (e.target.classList.contains("remove")) { row.remove(); markDirty(); save(); }
    if (e.target.classList.contains("up") && row.previousElementSibling && row.previousElementSibling.classList.contains("answer-item")) {
      row.parentNode.insertBefore(row, row.previousElementSibling); markDirty(); save();
    }
  });
  document.getElementById("add-item").addEventListener("click", addItem);
  document.getElementById("type-hint").addEventListener("click", (e) => { apply("answer_type", e.target.dataset.value); markDirty(); save(); });
  document.getElementById("scale-hint").addEventListener("click", (e) => { apply("scale", e.target.dataset.value); markDirty(); save(); });
  document.getElementById("submit-button").addEventListener("click", submit);
  document.getElementById("skip-button").addEventListener("click", () => {
    const skip = document.getElementById("skip-form");
    skip.hidden = false;
    document.getElementById("skip-reason").focus();
  });
  document.getElementById("diff-button").addEventListener("click", async () => {
    const box = document.getElementById("diff-container");
    box.hidden = !box.hidden;
    if (!box.hidden) box.scrollIntoView({ block: "start" });
    // Save first, so the diff compares the draft with what is on screen.
    if (!box.hidden && (await flush()) && window.htmx) {
      htmx.ajax("GET", root.dataset.diff, { target: "#diff-panel", swap: "outerHTML" });
    }
  });
  document.getElementById("reload-keep").addEventListener("click", () => window.location.reload());
  document.getElementById("help-button").addEventListener("click", () => document.getElementById("shortcuts").showModal());
  document.getElementById("paper-search").addEventListener("input", (e) => {
    const needle = e.target.value.toLowerCase();
    document.querySelectorAll(".paper-paragraph").forEach((p) => { p.hidden = needle && !p.textContent.toLowerCase().includes(needle); });
  });
  document.querySelectorAll("mark.mention").forEach((mark) => {
    const target = () => document.getElementById("table-" + mark.dataset.table);
    mark.addEventListener("mouseenter", () => target() && target().classList.add("highlighted"));
    mark.addEventListener("mouseleave", () => target() && target().classList.remove("highlighted"));
    mark.addEventListener("click", () => target() && target().scrollIntoView({ behavior: "smooth", block: "center" }));
  });

  document.addEventListener("keydown", (e) => {
    const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName);
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") { e.preventDefault(); submit(); return; }
    if (e.altKey && !e.ctrlKey) {
      const key = e.key.toLowerCase();
      const actions = {
        s: () => document.getElementById("skip-button").click(),
        d: () => document.getElementById("diff-button").click(),
        a: () => { const first = document.querySelector("#answer-items input"); if (first) first.focus(); },
        i: addItem,
        // Shortcuts move focus only: a value changes by the annotator's own choice, never silently.
        f: () => focusRadio("answer_form"),
        o: () => focusRadio("answer_source"),
        t: () => focusRadio("answer_type"),
        c: () => form.scale.focus(),
        n: async () => { if (await flush()) window.location.href = root.dataset.home; },
      };
      if (actions[key]) { e.preventDefault(); actions[key](); return; }
      if (/^[1-9]$/.test(e.key)) { e.preventDefault(); focusTable(Number(e.key) - 1); }
      return;
    }
    if (!typing && e.key === "?") { e.preventDefault(); document.getElementById("shortcuts").showModal(); }
  });

  setInterval(() => { if (dirty) save(); }, 4000);
  setInterval(() => {
    if (gone || Date.now() - lastActivity >= 60000) return;
    post(root.dataset.ping, {}).then(({ status, payload }) => { if (status === 403) lost(payload && payload.detail); }, () => {});
  }, 20000);
  ["keydown", "mousemove", "scroll"].forEach((name) => document.addEventListener(name, () => { lastActivity = Date.now(); }, { passive: true }));
  window.addEventListener("beforeunload", (e) => { if (dirty) { save(); e.preventDefault(); } });
})();
