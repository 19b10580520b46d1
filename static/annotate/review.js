// Review pages: keyboard shortcuts (Alt+A approve/confirm, Alt+R request changes/flag, Alt+C comment, Alt+N next,
// ? help) and activity pings that count active review time and keep a round-one lease alive.
(function () {
  "use strict";
  const root = document.getElementById("review");
  const csrf = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"];
  const help = document.getElementById("shortcuts");
  const decide = document.getElementById("decide-form");
  let lastActivity = Date.now();

  function typing(target) {
    return target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" || target.isContentEditable);
  }

  function hasComment() {
    if (!decide) return false;
    return [...decide.querySelectorAll("textarea")].some((t) => t.value.trim());
  }

  function press(id) {
    const button = document.getElementById(id);
    if (button && !button.disabled) button.click();
  }

  function postTo(url) {
    const form = document.createElement("form");
    form.method = "post";
    form.action = url;
    form.innerHTML = '<input type="hidden" name="csrfmiddlewaretoken" value="' + csrf + '">';
    document.body.appendChild(form);
    form.submit();
  }

  document.addEventListener("keydown", (event) => {
    lastActivity = Date.now();
    if (event.key === "?" && !typing(event.target)) {
      if (help) { event.preventDefault(); help.open ? help.close() : help.showModal(); }
      return;
    }
    if (!event.altKey || event.ctrlKey || event.metaKey) return;
    const key = event.key.toLowerCase();
    const page = root ? root.dataset.page : "home";
    if (key === "a") {
      event.preventDefault();
      press(page === "round2" ? "confirm-button" : "approve-button");
    } else if (key === "r") {
      event.preventDefault();
      if (!hasComment()) {
        const first = document.getElementById("c-instance");
        if (first) first.focus();
        return;
      }
      press(page === "round2" ? "flag-button" : "changes-button");
    } else if (key === "c") {
      event.preventDefault();
      const first = document.getElementById("c-instance");
      if (first) first.focus();
    } else if (key === "n") {
      event.preventDefault();
      const next = document.getElementById(page === "round2" ? "round2-next" : "review-next");
      if (next) { next.click(); return; }
      const slug = window.location.pathname.split("/")[2];
      postTo("/p/" + slug + (page === "round2" ? "/round2/next/" : "/review/next/"));
    }
  });

  const helpButton = document.getElementById("help-button");
  if (helpButton && help) helpButton.addEventListener("click", () => help.showModal());

  // A decision without a comment cannot request changes or flag: say so before the round trip.
  if (decide) {
    decide.addEventListener("submit", (event) => {
      const action = event.submitter ? event.submitter.value : "";
      if ((action === "request_changes" || action === "flag") && !hasComment()) {
        event.preventDefault();
        const first = document.getElementById("c-instance");
        if (first) { first.focus(); first.setCustomValidity("Write what is wrong first."); first.reportValidity(); first.setCustomValidity(""); }
      }
    });
  }

  ["mousemove", "scroll", "input"].forEach((name) => document.addEventListener(name, () => { lastActivity = Date.now(); }, { passive: true }));
  if (root && root.dataset.ping) {
    const ping = () => {
      if (Date.now() - lastActivity > 60000 || document.hidden) return;
      fetch(root.dataset.ping, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
        credentials: "same-origin",
        body: JSON.stringify({ activity: root.dataset.activity }),
      }).catch(() => {});
    };
    ping();
    setInterval(ping, 30000);
  }
})();
