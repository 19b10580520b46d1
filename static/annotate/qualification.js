/* Qualification exam: list-of-items answer editor, autosave triggers, Ctrl+Enter, countdown, submit confirmation. */
(function () {
  "use strict";
  const form = document.getElementById("exam-form");
  if (!form) return;
  let autoSubmitting = false;

  function save() {
    if (window.htmx) window.htmx.trigger(form, "exam-save");
  }

  function itemRow(name, label) {
    const li = document.createElement("li");
    const input = document.createElement("input");
    input.type = "text";
    input.name = name;
    input.autocomplete = "off";
    input.setAttribute("aria-label", label);
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "remove-item";
    remove.title = "Remove this item";
    remove.setAttribute("aria-label", "Remove this answer item");
    remove.textContent = "×";
    li.append(input, remove);
    return li;
  }

  function addItem(fieldset, after) {
    const list = fieldset.querySelector(".answer-items");
    const count = list.children.length + 1;
    const legend = fieldset.closest(".exam-item").querySelector("h2").firstChild.textContent.trim();
    const li = itemRow(fieldset.dataset.name, legend + ", answer item " + count);
    if (after && after.nextSibling) list.insertBefore(li, after.nextSibling);
    else list.appendChild(li);
    li.querySelector("input").focus();
  }

  form.addEventListener("click", function (event) {
    const target = event.target;
    if (target.classList.contains("add-item")) {
      addItem(target.closest(".answer-editor"));
    } else if (target.classList.contains("remove-item")) {
      const li = target.closest("li");
      const fieldset = target.closest(".answer-editor");
      const next = li.nextElementSibling || li.previousElementSibling;
      li.remove();
      if (next) next.querySelector("input").focus();
      else fieldset.querySelector(".add-item").focus();
      save();
    }
  });

  form.addEventListener("keydown", function (event) {
    const target = event.target;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      save();
      const section = target.closest(".exam-item");
      const next = section && section.nextElementSibling;
      const field = next && next.classList.contains("exam-item") ? next.querySelector(".answer-items input, .add-item") : document.getElementById("submit-exam");
      if (field) { field.focus(); field.scrollIntoView({ block: "center" }); }
      return;
    }
    if (event.key === "Enter" && target.matches(".answer-items input")) {
      event.preventDefault(); // Enter adds an item rather than submitting the exam
      addItem(target.closest(".answer-editor"), target.closest("li"));
    } else if (event.key === "Backspace" && target.matches(".answer-items input") && target.value === "") {
      const li = target.closest("li");
      const previous = li.previousElementSibling;
      if (previous) { event.preventDefault(); li.remove(); previous.querySelector("input").focus(); save(); }
    }
  });

  function unanswered() {
    let count = 0;
    form.querySelectorAll(".exam-item").forEach(function (section) {
      const filled = Array.from(section.querySelectorAll(".answer-items input")).some(function (i) { return i.value.trim(); });
      if (!filled) count += 1;
    });
    return count;
  }

  form.addEventListener("submit", function (event) {
    if (autoSubmitting) return;
    const missing = unanswered();
    const said = missing === 1 ? " question has no answer and" : " questions have no answer and";
    const message = (missing ? missing + said + " will count as wrong. " : "") +
      "Submit the exam now? You cannot change your answers afterwards.";
    if (!window.confirm(message)) event.preventDefault();
  });

  // Show autosave errors (409 after the deadline, 400 on a bad value) instead of dropping them.
  document.body.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "save-status" && event.detail.xhr.status >= 400) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  const clock = document.getElementById("countdown");
  if (clock) {
    const offset = Date.parse(clock.dataset.now) - Date.now();
    const deadline = Date.parse(clock.dataset.deadline);
    const tick = function () {
      const left = Math.max(0, Math.round((deadline - (Date.now() + offset)) / 1000));
      const minutes = Math.floor(left / 60), seconds = left % 60;
      clock.textContent = minutes + ":" + String(seconds).padStart(2, "0") + " left";
      clock.classList.toggle("urgent", left <= 60);
      if (left === 0 && !autoSubmitting) {
        autoSubmitting = true; // the server accepts answers sent within a short grace after the deadline
        form.submit();
        return;
      }
      window.setTimeout(tick, 1000);
    };
    tick();
  }
})();
