// The drafting form's choice of templates: "Select all" selects every template, "Clear" none (each context then gets
// its reasoning type's templates, as the hint under them says), and the count beside them says how many are selected.
(function () {
  var select = document.getElementById("f-template-ids");
  if (!select) return;
  var count = document.querySelector("#template-choice output");
  function say() {
    var chosen = select.selectedOptions.length;
    count.textContent = chosen ? chosen + " of " + select.options.length + " selected" : "none selected";
  }
  document.querySelectorAll("#template-choice [data-choose]").forEach(function (button) {
    button.addEventListener("click", function () {
      Array.prototype.forEach.call(select.options, function (option) { option.selected = button.dataset.choose === "all"; });
      say();
    });
  });
  select.addEventListener("change", say);
  say();
})();
