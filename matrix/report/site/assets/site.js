// The front page's grid of case × release × mode: drawn from the JSON in #grid-data, filtered in place.
// Record text is only ever set as textContent or title, never parsed as HTML. The filters'
// state lives in the location fragment (#status=failing&release=2.15.0), so a view can be linked.
(function () {
  "use strict";
  var source = document.getElementById("grid-data");
  var table = document.getElementById("grid");
  if (!source || !table) {
    return;
  }
  var data = JSON.parse(source.textContent);
  var names = ["name", "tag", "status", "release", "mode", "pack"];
  var controls = {};
  names.forEach(function (name) {
    controls[name] = document.getElementById("f-" + name);
  });
  var count = document.getElementById("f-count");
  var rule = document.createElement("style");
  document.head.appendChild(rule);
  var rows = [];
  var written = null;

  function element(tag, className, text) {
    var made = document.createElement(tag);
    if (className) {
      made.className = className;
    }
    if (text !== undefined && text !== null) {
      made.textContent = text;
    }
    return made;
  }

  // The grid is rows of fixed-width cells rather than a <table>: a row off screen is neither laid
  // out nor painted (content-visibility), so thousands of cells filter at once.
  function draw() {
    var longest = data.cases.reduce(function (most, kase) {
      return Math.max(most, kase.name.length);
    }, 4);
    // In em, not ch: the header's bold "0" is wider than the rows' and would shift every column.
    table.style.setProperty("--name", (Math.min(longest, 48) * 0.6 + 1).toFixed(1) + "em");
    table.style.setProperty("--modes", String(data.modes.length));
    var fragment = document.createDocumentFragment();
    var top = element("div", "head envs");
    var below = element("div", "head modes");
    top.appendChild(element("div", "corner", "case"));
    below.appendChild(element("div", "corner"));
    data.envs.forEach(function (env, e) {
      // The whole label, turned to read upwards (site.css): a narrow column still shows "2.9.1+cu128".
      var head = element("div", "env e" + e, env);
      head.title = env;
      head.setAttribute("role", "columnheader");
      top.appendChild(head);
    });
    data.columns.forEach(function (column, i) {
      var mode = data.modes[column[1]];
      var head = element("div", "mode c" + i, mode.charAt(0).toUpperCase());
      head.title = mode;
      head.setAttribute("role", "columnheader");
      below.appendChild(head);
    });
    [top, below].forEach(function (row) {
      row.setAttribute("role", "row");
      fragment.appendChild(row);
    });
    data.cases.forEach(function (kase) {
      var row = element("div", "row");
      row.setAttribute("role", "row");
      var link = element("a", "name", kase.name);
      link.href = kase.page;
      link.title = kase.name;
      link.setAttribute("role", "rowheader");
      row.appendChild(link);
      kase.cells.forEach(function (status, i) {
        var column = data.columns[i];
        var where = data.envs[column[0]] + " · " + data.modes[column[1]] + ": ";
        var cell;
        if (status === null) {
          cell = element("span", "cell c" + i + " none", "·");
          cell.title = where + "no record";
        } else {
          cell = element("span", "cell c" + i + " s s" + status, data.glyphs[status]);
          var note = kase.notes[String(i)];
          cell.title = where + data.statuses[status] + (note ? " — " + note : "");
        }
        cell.setAttribute("role", "cell");
        row.appendChild(cell);
      });
      fragment.appendChild(row);
      rows.push(row);
    });
    table.setAttribute("role", "table");
    table.appendChild(fragment);
    // The releases' row took the height of its longest label: keep it when a filter hides that one, and
    // stick the modes' row right under it.
    table.style.setProperty("--env-height", top.getBoundingClientRect().height + "px");
  }

  function wantedStatuses(value) {
    if (value === "") {
      return null;
    }
    var wanted = {};
    if (value === data.any_failure) {
      data.failing.forEach(function (index) {
        wanted[index] = true;
      });
    } else if (data.statuses.indexOf(value) >= 0) {
      wanted[data.statuses.indexOf(value)] = true;
    }
    return wanted;
  }

  function apply() {
    var needle = controls.name.value.trim().toLowerCase();
    var tag = controls.tag.value;
    var pack = controls.pack.value;
    var env = controls.release.value === "" ? -1 : data.envs.indexOf(controls.release.value);
    var mode = controls.mode.value === "" ? -1 : data.modes.indexOf(controls.mode.value);
    var wanted = wantedStatuses(controls.status.value);
    var visible = data.columns.map(function (column) {
      return (env < 0 || column[0] === env) && (mode < 0 || column[1] === mode);
    });
    var shown = 0;
    data.cases.forEach(function (kase, r) {
      var keep =
        (needle === "" || kase.name.toLowerCase().indexOf(needle) >= 0) &&
        (tag === "" || kase.tags.indexOf(tag) >= 0) &&
        (pack === "" || (pack === "real") === kase.real);
      if (keep && wanted) {
        keep = kase.cells.some(function (status, i) {
          return visible[i] && status !== null && wanted[status] === true;
        });
      }
      rows[r].hidden = !keep;
      shown += keep ? 1 : 0;
    });
    var hidden = [];
    visible.forEach(function (show, i) {
      if (!show) {
        hidden.push("#grid .c" + i);
      }
    });
    data.envs.forEach(function (name, e) {
      if (env >= 0 && e !== env) {
        hidden.push("#grid .e" + e);
      }
    });
    var rules = hidden.length ? [hidden.join(",") + "{display:none!important}"] : [];
    if (mode >= 0) {
      rules.push("#grid{--modes:1}");
    }
    if (wanted) {
      var others = Object.keys(wanted).map(function (index) {
        return ":not(.s" + index + ")";
      });
      rules.push("#grid .s" + others.join("") + "{opacity:0.2}");
    }
    var css = rules.join("\n");
    if (rule.textContent !== css) {
      rule.textContent = css; // a new style sheet restyles every cell: only when it changed
    }
    count.textContent = shown + " of " + data.cases.length + " cases";
    remember();
  }

  function remember() {
    var parts = [];
    names.forEach(function (name) {
      var value = controls[name].value;
      if (value !== "") {
        parts.push(name + "=" + encodeURIComponent(value));
      }
    });
    var hash = parts.length ? "#" + parts.join("&") : "";
    if (hash === written || (hash === "" && written === null)) {
      return;
    }
    written = hash;
    try {
      history.replaceState(null, "", hash || location.pathname + location.search);
    } catch (refused) {
      location.replace(hash || "#");
    }
  }

  function recall() {
    var hash = location.hash.replace(/^#/, "");
    if (hash.indexOf("=") < 0 || "#" + hash === written) {
      return false; // a link to a section (#legend), or the state this page wrote
    }
    var found = {};
    hash.split("&").forEach(function (part) {
      var at = part.indexOf("=");
      try {
        found[decodeURIComponent(part.slice(0, at))] = decodeURIComponent(part.slice(at + 1));
      } catch (malformed) {
        // a hand-edited fragment: that part is left out
      }
    });
    names.forEach(function (name) {
      var value = Object.prototype.hasOwnProperty.call(found, name) ? found[name] : "";
      var control = controls[name];
      if (control.tagName === "SELECT") {
        var known = Array.prototype.some.call(control.options, function (option) {
          return option.value === value;
        });
        control.value = known ? value : "";
      } else {
        control.value = value;
      }
    });
    return true;
  }

  draw();
  recall();
  apply();
  names.forEach(function (name) {
    controls[name].addEventListener(name === "name" ? "input" : "change", apply);
  });
  window.addEventListener("hashchange", function () {
    if (recall()) {
      apply();
    }
  });
  if (window.performance && performance.mark) {
    performance.mark("grid-drawn");
  }
})();
