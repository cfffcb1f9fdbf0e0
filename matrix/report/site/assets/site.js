// The front page's two filtered views: the grid of case × release × mode, drawn from the JSON in #grid-data, and
// the table of changes between releases. Record text is only ever set as textContent or title, never parsed as
// HTML. The filters' state lives in the location fragment (#status=failing&release=2.15.0&into=2.15.0), so that
// a view can be linked; each change of a filter is a history entry (the back button restores the one before),
// and a link to a filtered view (#release=…) sets its filters and scrolls to what it filters.
(function () {
  "use strict";
  var views = []; // each: {keys, controls: {key: element}, section, apply}

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

  function controlsOf(prefix, keys) {
    var found = {};
    for (var i = 0; i < keys.length; i++) {
      found[keys[i]] = document.getElementById(prefix + keys[i]);
      if (!found[keys[i]]) {
        return null;
      }
    }
    return found;
  }

  // --- the grid -----------------------------------------------------------------------------------

  function gridView() {
    var source = document.getElementById("grid-data");
    var table = document.getElementById("grid");
    var keys = ["search", "tag", "status", "release", "mode", "pack"];
    var controls = controlsOf("f-", keys);
    if (!source || !table || !controls) {
      return null;
    }
    var data = JSON.parse(source.textContent);
    var count = document.getElementById("f-count");
    var rule = document.createElement("style");
    document.head.appendChild(rule);
    var rows = [];
    var haystacks = data.cases.map(function (kase) {
      return [kase.name].concat(kase.tags, kase.packages || [], kase.errors || []).join("\n").toLowerCase();
    });

    // Rows of fixed-width cells rather than a <table>: a row off screen is neither laid out nor painted
    // (content-visibility), so thousands of cells filter at once.
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
        var head = element("div", "mode c" + i, data.letters[column[1]]);
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
            cell = element("span", "cell c" + i + " s s" + status + marks(kase, i), data.glyphs[status]);
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

    // A cell's marks besides its status, as classes: "staged" where a later stage failed (outlined, site.css),
    // "m-graph-change" and "m-op-drift" where such a transition ends in it (what their filters pick).
    function marks(kase, i) {
      var found = "";
      if ((kase.stages || {})[String(i)]) {
        found += " staged";
      }
      ((kase.moves || {})[String(i)] || []).forEach(function (kind) {
        found += " m-" + kind;
      });
      return found;
    }

    // The status filter's value as what it picks: statuses (by index), cells with a failed later stage, a kind of
    // transition; and the classes of the cells it picks, to dim the others.
    function wantedStatuses(value) {
      if (value === "") {
        return null;
      }
      var wanted = { statuses: {}, staged: false, move: null, classes: [] };
      if (value === data.any_failure) {
        data.failing.forEach(function (index) {
          wanted.statuses[index] = true;
          wanted.classes.push("s" + index);
        });
        wanted.staged = true;
        wanted.classes.push("staged");
      } else if (value === data.stage_failure) {
        wanted.staged = true;
        wanted.classes.push("staged");
      } else if ((data.move_kinds || []).indexOf(value) >= 0) {
        wanted.move = value;
        wanted.classes.push("m-" + value);
      } else if (data.statuses.indexOf(value) >= 0) {
        wanted.statuses[data.statuses.indexOf(value)] = true;
        wanted.classes.push("s" + data.statuses.indexOf(value));
      }
      return wanted;
    }

    function picks(wanted, kase, status, i) {
      if (status === null) {
        return false;
      }
      return (
        wanted.statuses[status] === true ||
        (wanted.staged && Boolean((kase.stages || {})[String(i)])) ||
        (wanted.move !== null && ((kase.moves || {})[String(i)] || []).indexOf(wanted.move) >= 0)
      );
    }

    var chosen = "-1 -1"; // the release and mode the columns were last chosen by

    function apply() {
      var needle = controls.search.value.trim().toLowerCase();
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
          (needle === "" || haystacks[r].indexOf(needle) >= 0) &&
          (tag === "" || kase.tags.indexOf(tag) >= 0) &&
          (pack === "" || (pack === "real") === kase.real);
        if (keep && wanted) {
          keep = kase.cells.some(function (status, i) {
            return visible[i] && picks(wanted, kase, status, i);
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
        var others = wanted.classes.map(function (name) {
          return ":not(." + name + ")";
        });
        rules.push("#grid .s" + others.join("") + "{opacity:0.2}");
      }
      var css = rules.join("\n");
      if (rule.textContent !== css) {
        rule.textContent = css; // a new style sheet restyles every cell: only when it changed
      }
      // Other columns chosen (a release, a mode): the grid shows them from its left edge, beside the names,
      // wherever it was scrolled to before.
      var columns = env + " " + mode;
      if (columns !== chosen) {
        chosen = columns;
        table.parentElement.scrollLeft = 0;
      }
      count.textContent = shown + " of " + data.cases.length + " cases";
    }

    draw();
    return { keys: keys, controls: controls, section: document.getElementById("cases"), apply: apply };
  }

  // --- the changes between releases -----------------------------------------------------------------

  function changesView() {
    // The tables are the page's own (every regression, every fix); the widget holds each row's filter keys.
    var keyed = document.getElementById("change-keys");
    var keys = ["into", "change"];
    var controls = controlsOf("c-", keys);
    if (!keyed || !controls) {
      return null;
    }
    var data = JSON.parse(keyed.textContent);
    var rows = Array.prototype.slice.call(document.querySelectorAll("#every-regression tbody tr, #every-fix tbody tr"));
    rows.forEach(function (row, i) {
      row.setAttribute("data-into", data.rows[i][0]);
      row.setAttribute("data-change", data.rows[i][1]);
    });
    var count = document.getElementById("c-count");
    // A long table is paged: the first rows a filter keeps, and a button that shows the rest.
    var more = document.getElementById("c-more");
    var page = data.page || rows.length;
    var limit = page;

    function filter() {
      var into = controls.into.value;
      var change = controls.change.value;
      var shown = 0;
      var listed = 0;
      rows.forEach(function (row) {
        var keep =
          (into === "" || row.getAttribute("data-into") === into) &&
          (change === "" || row.getAttribute("data-change").split(" ").indexOf(change) >= 0);
        row.hidden = !keep || listed >= limit;
        shown += keep ? 1 : 0;
        listed += keep && !row.hidden ? 1 : 0;
        // A fix a filter keeps is shown: its table opens.
        var folded = row.closest("details");
        if (folded && keep && (into !== "" || change !== "")) {
          folded.open = true;
        }
      });
      count.textContent =
        shown + " of " + rows.length + " changes" + (listed < shown ? " (the first " + listed + " shown)" : "");
      if (more) {
        more.hidden = listed >= shown;
        more.textContent = "Show all " + shown;
      }
    }

    function apply() {
      limit = page; // a new filter starts on its first page
      filter();
    }

    if (more) {
      more.addEventListener("click", function () {
        limit = rows.length;
        filter();
      });
    }

    return { keys: keys, controls: controls, section: document.getElementById("changes"), apply: apply };
  }

  // --- the state in the address ---------------------------------------------------------------------

  var written = location.hash; // the fragment the page last wrote or read
  var typing = false; // a run of keystrokes in the search is one history entry

  function parse(hash) {
    var found = {};
    hash
      .replace(/^#/, "")
      .split("&")
      .forEach(function (part) {
        var at = part.indexOf("=");
        if (at < 0) {
          return;
        }
        try {
          found[decodeURIComponent(part.slice(0, at))] = decodeURIComponent(part.slice(at + 1));
        } catch (malformed) {
          // a hand-edited fragment: that part is left out
        }
      });
    return found;
  }

  function isFilter(hash) {
    return hash.indexOf("=") >= 0; // else a link to a section (#legend), or none
  }

  function current() {
    var parts = [];
    views.forEach(function (view) {
      view.keys.forEach(function (key) {
        var value = view.controls[key].value;
        if (value !== "") {
          parts.push(key + "=" + encodeURIComponent(value));
        }
      });
    });
    return parts.length ? "#" + parts.join("&") : "";
  }

  function record(how) {
    var hash = current();
    if (hash === written) {
      return;
    }
    written = hash;
    var url = hash || location.pathname + location.search;
    try {
      if (how === "push") {
        history.pushState({ filters: hash }, "", url);
      } else {
        history.replaceState({ filters: hash }, "", url);
      }
    } catch (refused) {
      location.replace(hash || "#");
    }
  }

  function set(control, value) {
    if (control.tagName === "SELECT") {
      var known = Array.prototype.some.call(control.options, function (option) {
        return option.value === value;
      });
      control.value = known ? value : "";
    } else {
      control.value = value;
    }
  }

  // The views whose keys ``found`` names get every key of theirs from it ("" where it has none); the others keep
  // theirs, unless ``all`` (the whole state, as a history entry holds it).
  function recall(found, all) {
    var touched = views.filter(function (view) {
      return (
        all ||
        view.keys.some(function (key) {
          return Object.prototype.hasOwnProperty.call(found, key);
        })
      );
    });
    touched.forEach(function (view) {
      view.keys.forEach(function (key) {
        set(view.controls[key], Object.prototype.hasOwnProperty.call(found, key) ? found[key] : "");
      });
      view.apply();
    });
  }

  // Scroll to the first view whose filters ``found`` names.
  function reveal(found) {
    var named = views.filter(function (view) {
      return view.keys.some(function (key) {
        return Object.prototype.hasOwnProperty.call(found, key);
      });
    });
    if (named.length && named[0].section) {
      named[0].section.scrollIntoView({ block: "start" });
    }
  }

  function follow(hash) {
    typing = false;
    var found = parse(hash);
    recall(found, false);
    record("push");
    reveal(found);
  }

  // A link to a section collapsed under its heading (#legend, #env-errors) opens it.
  function openSection() {
    var named = location.hash.length > 1 && !isFilter(location.hash) ? location.hash.slice(1) : "";
    var target = named ? document.getElementById(named) : null;
    var first = target ? target.firstElementChild : null;
    if (first && first.tagName === "DETAILS") {
      first.open = true;
    }
  }
  openSection();
  window.addEventListener("hashchange", openSection);

  [gridView(), changesView()].forEach(function (view) {
    if (view) {
      views.push(view);
    }
  });
  if (!views.length) {
    return;
  }
  if (isFilter(location.hash)) {
    recall(parse(location.hash), true);
    reveal(parse(location.hash));
  } else {
    views.forEach(function (view) {
      view.apply();
    });
  }
  try {
    history.replaceState({ filters: current() }, "", location.href); // what going back to this entry restores
  } catch (refused) {
    // a browser that keeps no state: going back restores what the address says
  }
  views.forEach(function (view) {
    view.keys.forEach(function (key) {
      var control = view.controls[key];
      if (control.tagName === "SELECT") {
        control.addEventListener("change", function () {
          typing = false;
          view.apply();
          record("push");
        });
      } else {
        control.addEventListener("input", function () {
          view.apply();
          record(typing ? "replace" : "push");
          typing = true;
        });
        control.addEventListener("blur", function () {
          typing = false;
        });
      }
    });
  });
  // A link to a filtered view sets its filters and scrolls to it, as one history entry.
  document.addEventListener("click", function (event) {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) {
      return;
    }
    var link = event.target.closest ? event.target.closest("a[href^='#']") : null;
    if (!link || !isFilter(link.getAttribute("href"))) {
      return;
    }
    event.preventDefault();
    follow(link.getAttribute("href"));
  });
  // Back and forward to an entry this page wrote: its filters, as they were. Other entries (a link to a section,
  // a fragment typed in the address bar) carry no state: the hashchange that follows handles them.
  window.addEventListener("popstate", function (event) {
    if (event.state && typeof event.state.filters === "string") {
      typing = false;
      written = location.hash;
      recall(parse(event.state.filters), true);
    }
  });
  // A fragment typed into the address bar, or a section link followed: the filters it names are set and shown.
  window.addEventListener("hashchange", function () {
    if (location.hash === written) {
      return; // the state this page wrote, or an entry popstate restored
    }
    written = location.hash;
    if (isFilter(location.hash)) {
      typing = false;
      recall(parse(location.hash), true);
      reveal(parse(location.hash));
    }
  });
  if (window.performance && performance.mark) {
    performance.mark("grid-drawn");
  }
})();
