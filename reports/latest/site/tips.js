// A case page's grids of releases × releases (saved × loaded, compiled × loaded, exported × compiled): each square's
// tooltip, drawn from its grid's words and its row's and column's headers. A square names its text by index
// (data-t) in the page's JSON list of what squares say (or, for a grid on its own, the list after its table), so
// that an error shared by many squares is stored once; the same failures are listed as text under each grid.
// Record text is only ever set as a title, never parsed as HTML.
(function () {
  "use strict";

  function label(cell) {
    return cell ? cell.textContent : "";
  }

  var page = null; // the page's list, parsed once

  function tips(table) {
    var source = table.nextElementSibling;
    var said;
    if (source && source.className === "tips") {
      said = JSON.parse(source.textContent);
    } else {
      if (page === null) {
        source = document.querySelector("body > script.tips");
        page = source ? JSON.parse(source.textContent) : [];
      }
      said = page;
    }
    var made = table.getAttribute("data-made");
    var used = table.getAttribute("data-used");
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    var body = table.tBodies[0] ? table.tBodies[0].rows : [];
    for (var r = 0; r < body.length; r++) {
      var cells = body[r].cells;
      var row = label(cells[0]);
      for (var c = 1; c < cells.length; c++) {
        var index = cells[c].getAttribute("data-t");
        if (index !== null && said[index] !== undefined) {
          cells[c].title = made + " on " + row + ", " + used + " on " + label(heads[c]) + ": " + said[index];
        }
      }
    }
  }

  function all() {
    var tables = document.querySelectorAll("table[data-made]");
    for (var i = 0; i < tables.length; i++) {
      tips(tables[i]);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", all);
  } else {
    all();
  }
})();
