// The upgrade page: draws the answer for the pair of builds in the address (#upgrade=A..B&scope=pack&case=words)
// from the data the report embedded (matrix/report/site/upgrade.py). Nothing is judged here: each pair's verdicts,
// statuses and worded tallies come as they were computed; the script picks the pair and the rows and draws them.
(function () {
  "use strict";
  var source = document.getElementById("upgrade-data");
  if (!source) {
    return;
  }
  var data = JSON.parse(source.textContent);
  var before = document.getElementById("upgrade-before");
  var after = document.getElementById("upgrade-after");
  var scope = document.getElementById("upgrade-scope");
  var named = document.getElementById("upgrade-case");
  var answer = document.getElementById("upgrade-answer");
  // The page's own sections answer the newest pair; the script answers the pair chosen in their place.
  ["every-case", "pack", "other-breaks"].forEach(function (id) {
    var section = document.getElementById(id);
    if (section) {
      section.hidden = true;
    }
  });
  var modes = data.modes;
  var QUESTIONS = ["saved program", "AOTInductor package", "compile"];
  var PER_MODE = QUESTIONS.length; // characters per mode in a pair's row, after the verdict's

  function parse(hash) {
    var found = {};
    hash.replace(/^#/, "").split("&").forEach(function (part) {
      var at = part.indexOf("=");
      if (at > 0) {
        found[decodeURIComponent(part.slice(0, at))] = decodeURIComponent(part.slice(at + 1));
      }
    });
    return found;
  }

  function fragment() {
    var parts = ["upgrade=" + encodeURIComponent(before.value + ".." + after.value).replace(/%2B/g, "+")];
    parts.push("scope=" + scope.value);
    if (named.value.trim()) {
      parts.push("case=" + encodeURIComponent(named.value.trim()));
    }
    return "#" + parts.join("&");
  }

  function el(tag, attrs, content) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      node.setAttribute(key, attrs[key]);
    });
    if (content !== undefined) {
      node.textContent = content;
    }
    return node;
  }

  function glyph(code, label) {
    var drawn = data.codes[code] || data.codes["-"];
    var cell = el("span", { class: drawn[0], title: label + ": " + drawn[2] }, drawn[1]);
    cell.setAttribute("data-status", code === "-" ? "" : drawn[2]);
    return cell;
  }

  function wanted(index, words) {
    if (scope.value === "pack" && data.pack.indexOf(index) < 0) {
      return false;
    }
    if (!words.length) {
      return true;
    }
    var name = data.cases[index].toLowerCase();
    return words.some(function (word) {
      return name.indexOf(word) >= 0;
    });
  }

  function draw() {
    answer.textContent = "";
    var key = before.value + ".." + after.value;
    var pair = data.pairs[key];
    if (!pair) {
      var newer = data.releases.indexOf(after.value) > data.releases.indexOf(before.value);
      var why = !newer
        ? "B must be newer than A: choose a newer build to upgrade to."
        : "This site answers the pairs that end on the newest build and those of consecutive builds (a page of"
          + " every pair would be too large); the report's upgrade.md and `export-matrix check --torch A B` answer others.";
      answer.appendChild(el("p", { class: "lead" }, why));
      return;
    }
    answer.appendChild(el("h2", {}, "From " + before.value + " to " + after.value));
    var lines = el("ul", { class: "upgrade-tallies" });
    var pack = scope.value === "pack";
    var broken = pack ? pair.breaks_pack + " of the " + data.pack.length + " real models" : pair.breaks + " of " + data.cases.length + " cases";
    lines.appendChild(el("li", {}, "The upgrade breaks " + broken + "."));
    (pack ? pair.pack : pair.all).forEach(function (line) {
      lines.appendChild(el("li", {}, line));
    });
    answer.appendChild(lines);
    var words = named.value.toLowerCase().split(/[\s,]+/).filter(Boolean);
    var table = el("table", { class: "upgrade", id: "upgrade-table" });
    var head = el("thead");
    var top = el("tr");
    top.appendChild(el("th", { rowspan: "2" }, "case"));
    top.appendChild(el("th", { rowspan: "2" }, "verdict"));
    top.appendChild(el("th", { colspan: String(modes.length) }, "export: A → B"));
    QUESTIONS.forEach(function (question) {
      top.appendChild(el("th", { colspan: String(modes.length) }, question + ": A on B"));
    });
    var sub = el("tr");
    for (var q = 0; q <= QUESTIONS.length; q++) {
      modes.forEach(function (mode) {
        sub.appendChild(el("th", {}, mode));
      });
    }
    head.appendChild(top);
    head.appendChild(sub);
    table.appendChild(head);
    var body = el("tbody");
    var width = 1 + PER_MODE * modes.length;
    var shown = 0;
    data.cases.forEach(function (name, index) {
      if (!wanted(index, words)) {
        return;
      }
      shown += 1;
      var row = pair.rows.substr(index * width, width);
      var tr = el("tr", { "data-case": name });
      var th = el("th", { scope: "row" });
      var link = el("a", { href: data.pages[index] }, name);
      th.appendChild(link);
      tr.appendChild(th);
      var verdict = data.verdicts[row.charCodeAt(0) - 97];
      tr.appendChild(el("td", { class: "verdict-" + verdict.replace(/ /g, "-") }, verdict));
      modes.forEach(function (mode, m) {
        var td = el("td", { class: "upgrade-export", "data-mode": mode });
        var a = data.export[before.value].charAt(index * modes.length + m);
        var b = data.export[after.value].charAt(index * modes.length + m);
        td.appendChild(glyph(a, before.value));
        td.appendChild(document.createTextNode(" → "));
        td.appendChild(glyph(b, after.value));
        tr.appendChild(td);
      });
      QUESTIONS.forEach(function (question, q) {
        modes.forEach(function (mode, m) {
          var td = el("td", { "data-question": question, "data-mode": mode });
          td.appendChild(glyph(row.charAt(1 + m * PER_MODE + q), question + ", " + mode));
          tr.appendChild(td);
        });
      });
      body.appendChild(tr);
    });
    table.appendChild(body);
    answer.appendChild(table);
    if (!shown) {
      answer.appendChild(el("p", { class: "lead" }, "No case of this scope matches “" + named.value + "”."));
    }
  }

  function recall(hash) {
    var found = parse(hash);
    var pair = (found.upgrade || data.newest).split("..");
    if (pair.length === 2 && data.releases.indexOf(pair[0]) >= 0 && data.releases.indexOf(pair[1]) >= 0) {
      before.value = pair[0];
      after.value = pair[1];
    }
    scope.value = found.scope === "all" ? "all" : "pack";
    named.value = found.case || "";
    draw();
  }

  function changed() {
    var hash = fragment();
    if (hash !== location.hash) {
      history.pushState(null, "", hash);
    }
    draw();
  }

  [before, after, scope].forEach(function (control) {
    control.addEventListener("change", changed);
  });
  named.addEventListener("input", function () {
    history.replaceState(null, "", fragment());
    draw();
  });
  document.getElementById("upgrade-form").addEventListener("submit", function (event) {
    event.preventDefault();
  });
  window.addEventListener("hashchange", function () {
    recall(location.hash);
  });
  recall(location.hash);
})();
