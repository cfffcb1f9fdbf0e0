// A case page's grids of releases × releases (saved × loaded, compiled × loaded, exported × compiled): each square's
// tooltip names its row's and its column's release, as the grid's corner words them ("strict: saved on ↓ loaded on
// →"), before what the page says of the square (a failure's outcome and error class), so that a reader hovering a
// square in a wide grid need not follow its row and column. Record text is only ever set as a title.
(function () {
  "use strict";

  var CORNER = /(\S+) on ↓ (\S+) on →/;

  function tips(table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    var words = heads.length ? CORNER.exec(heads[0].textContent) : null;
    if (!words) {
      return;
    }
    var body = table.tBodies[0] ? table.tBodies[0].rows : [];
    for (var r = 0; r < body.length; r++) {
      var cells = body[r].cells;
      var row = cells[0] ? cells[0].textContent : "";
      for (var c = 1; c < cells.length; c++) {
        var square = cells[c].firstElementChild || cells[c];
        var said = square.getAttribute("title");
        var where = words[1] + " on " + row + ", " + words[2] + " on " + (heads[c] ? heads[c].textContent : "");
        square.setAttribute("title", said ? where + ": " + said : where);
      }
    }
  }

  function all() {
    var tables = document.querySelectorAll("table.grid");
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
