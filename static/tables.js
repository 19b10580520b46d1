// Tables marked `stack` turn into one card per row on narrow screens (see app.css): each cell is labelled with
// its column's header here, so a person on a phone reads "Role: Annotator" instead of scrolling sideways to
// find a row's actions. Runs again after htmx swaps in new rows.
(function () {
  function label(root) {
    root.querySelectorAll("table.stack").forEach(function (table) {
      var heads = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) {
        return th.textContent.trim();
      });
      table.querySelectorAll("tbody tr").forEach(function (row) {
        Array.prototype.forEach.call(row.children, function (cell, index) {
          if (heads[index] && !cell.hasAttribute("data-label")) cell.setAttribute("data-label", heads[index]);
        });
      });
    });
  }
  document.addEventListener("DOMContentLoaded", function () { label(document); });
  document.addEventListener("htmx:afterSwap", function (event) { label(event.target); });
})();
