"""What a report shows, judged once from the records; the Markdown pages and the HTML site only render it.

:func:`build` turns a :class:`~matrix.records.store.Store` (and an earlier report's tables, for
``--baseline``) into a :class:`Model`: the cell table and its environment labels, the transitions
between releases, the summary table and its pass rates, the tables of disagreements, claims,
flaky cells, stage failures and failure signatures, each case's distinct failures to reproduce
(:mod:`.repro`), the load table (saved × loaded) with its orders, the verdicts (which hold the
saved-program epochs), the baseline comparison, the matrix's scope (releases, builds, cases,
modes and cells, counted apart: :mod:`.scope`), the builds that lack a dependency set
(:mod:`.completeness`: marked wherever named, left out of transitions and verdicts), each
build of another variant compared with PyPI's build of its release (:mod:`.builds`), and every
product's uses with the verdicts their declarations ask for (:mod:`.product_uses`). Everything above
is of the cells of the report's main device; each build that also ran on another device is compared with itself
there (:mod:`.devices`).

Pass rate = pass / applicable cells (not-applicable and case-error left out), per environment
and mode (:class:`PassRate`); the newest release's is :func:`newest_pass_rate`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

import pandas as pd

from matrix.contract.products import PRODUCTS, Product
from matrix.contract.schema import APPLICABLE
from matrix.records import baseline as since
from matrix.records import builds as compared_builds
from matrix.records import candidate, completeness, product_uses, repro, store, tables, transitions
from matrix.records import devices as by_device
from matrix.records import epochs as saved_epochs
from matrix.records import figures as headline
from matrix.records import graph_diffs as graph_diffs_table
from matrix.records import scope as covered
from matrix.records import upgrade as upgrade_answer
from matrix.records import verdicts as judged
from matrix.records.failures import Sighting, sightings
from matrix.records.open_regressions import open_regressions
from matrix.records.transitions import Step

Key = Tuple[str, str, str, str]  # release, variant, python, and the --with set ("" for none)
ENV = ["release", "variant", "python", "with_set"]  # the summary table's environment columns


@dataclass(frozen=True)
class PassRate:
    """One environment and mode of the summary table: its cells and how many of those that ran torch.export pass."""

    environment: Key
    label: str  # the environment's label (tables.environment_labels)
    mode: str
    cells: int  # every cell, whatever its status
    passed: int
    judged: int  # applicable cells: those that ran torch.export
    rate: float  # passed / judged, the summary's pass_rate; NaN where none was judged
    incomplete: bool = False  # the build lacks a dependency set (completeness): no headline rate comes from it


@dataclass(frozen=True)
class Model:
    """Everything a report shows of its records, computed once."""

    cells: pd.DataFrame  # tables.cells
    labels: pd.Series  # environment label per row of cells
    environments: pd.DataFrame  # the environment records
    env_errors: pd.DataFrame
    moves: pd.DataFrame  # transitions.collect
    steps: Tuple[Step, ...]  # the release transitions, oldest first
    summary: pd.DataFrame  # tables.summary
    pass_rates: Tuple[PassRate, ...]  # the summary's, in report order
    disagreements: pd.DataFrame
    claims: pd.DataFrame
    flaky: pd.DataFrame
    stage_failures: pd.DataFrame
    signatures: pd.DataFrame
    loads: pd.DataFrame  # artifacts.table: one row per saved × loaded program (empty without load records)
    load_orders: Tuple[List[str], List[str]]  # artifacts.orders: saving and loading labels in version order
    verdicts: judged.Verdicts
    runs: int = 0  # cell records behind the cells (after replacing re-runs)
    warnings: Tuple[str, ...] = ()
    baseline: Optional[since.BaselineComparison] = None
    baseline_name: Optional[str] = None
    repros: Tuple[repro.Failure, ...] = ()  # each case's distinct failures, each with the cell its repro is for
    scope: covered.Scope = covered.NONE  # covered.of(cells, env_errors)
    # Builds with cells that lack a dependency set: marked on every page, left out of transitions and verdicts.
    incomplete: Tuple[completeness.IncompleteBuild, ...] = ()
    # Each build of another variant compared with PyPI's build of its release.
    builds: Tuple[compared_builds.BuildComparison, ...] = ()
    # Each candidate build (a nightly, a release candidate) against the newest release.
    candidates: Tuple[candidate.Verdict, ...] = ()
    # Every product's uses (product_uses.judge), in the declarations' order; empty where the records hold none.
    uses: Tuple[product_uses.ProductUses, ...] = field(
        default_factory=lambda: tuple(product_uses.judge(p, pd.DataFrame()) for p in PRODUCTS)
    )
    # The diff of each graph change shown (graph_diffs.table): from the graph texts, else kept by an earlier report.
    graph_diffs: pd.DataFrame = field(default_factory=lambda: graph_diffs_table.frame([]))
    # The known upstream issues that label some failure of the cells, loads, packages or compiles (labelled, and
    # still counted as failures).
    known_issues: Tuple[Sighting, ...] = ()
    # The tables indexed for the upgrade answer between any two released builds (:mod:`.upgrade`).
    upgrades: upgrade_answer.Upgrades = field(default_factory=lambda: upgrade_answer.Upgrades(pd.DataFrame()))
    # What each product's uses say of the promise its declaration names, pair by pair (product_uses.verdicts).
    promises: Tuple[product_uses.Verdict, ...] = ()
    # The headline figures (figures.of), and how they moved since the baseline's (None without its figures).
    figures: Dict[str, int] = field(default_factory=dict)
    figures_since: Optional[headline.Since] = None
    # The cells of other devices than the main one (devices.split), and each of their builds compared with itself on
    # the main device: never in a transition, a verdict or the grid.
    elsewhere: pd.DataFrame = field(default_factory=pd.DataFrame)
    devices: Tuple[by_device.DeviceComparison, ...] = ()

    def uses_of(self, product: Product) -> product_uses.ProductUses:
        """One product's uses."""
        return next(u for u in self.uses if u.product == product)

    @property
    def main_device(self) -> str:
        """The device of ``cells``."""
        return by_device.main(self.cells)

    @property
    def epochs(self) -> Tuple[saved_epochs.Epoch, ...]:
        """The saved-program epochs, as the verdicts hold them."""
        return self.verdicts.epochs

    @property
    def upgrade_agreement(self) -> Tuple[upgrade_answer.Disagreement, ...]:
        """Where the front page's "upgrading A → B breaks" (the newest pair) and "regressed in B" name different
        cells, and why (:func:`.upgrade.agreement`); none with fewer than two builds."""
        pair = upgrade_answer.newest_pair(self.upgrades.releases)
        if pair is None:
            return ()
        regressed = [(o.case, mode) for o in self.verdicts.regressions.in_newest for mode in o.modes]
        return upgrade_answer.agreement(self.upgrades.answer(*pair), regressed, pair[0])

    @property
    def newest_pass_rate(self) -> Tuple[str, int, int]:
        """See :func:`newest_pass_rate`."""
        return newest_pass_rate(self.pass_rates)


def build(
    loaded: store.Store,
    base: Optional[Tuple[pd.DataFrame, Optional[pd.DataFrame]]] = None,
    baseline_name: Optional[str] = None,
    known_releases: Sequence[str] = (),
    kept_diffs: Sequence[pd.DataFrame] = (),
    base_figures: Optional[Dict[str, int]] = None,
) -> Model:
    """The model of the records ``loaded``; ``base`` is an earlier report's tables (``baseline.read_baseline``)
    and ``base_figures`` its headline figures (``figures.read``).

    ``known_releases``: the releases of the matrix, to tell which minor series were not run. ``kept_diffs``:
    earlier reports' graph diffs (``graph_diffs.read``), shown for the graph changes whose texts are missing.
    """
    # A device is never a transition: the report judges the main device's cells, and compares the others apart.
    everything = tables.cells(loaded.cells)
    found, elsewhere = by_device.split(everything)
    lacking = completeness.find(found, loaded.env_errors, loaded.environments)
    found = completeness.superseded(found, lacking)
    cells = completeness.mark(found, lacking)
    # Transitions and the verdicts' counts leave incomplete builds out: their releases stay in the
    # series (release_lists), without cells, so that a series breaks there instead of skipping them.
    judged_cells = completeness.complete(cells)
    compared = transitions.pairs(judged_cells, release_lists(loaded, cells))
    moves = transitions.collect(compared)
    diffs = graph_diffs_table.table(moves, cells, kept_diffs)
    moves = graph_diffs_table.attach(moves, cells, diffs)
    # The verdicts judge releases: a candidate (a nightly, a release candidate) has a verdict of its own.
    released = _released(judged_cells)
    released_moves = (
        moves[[not candidate.is_candidate(r, v) for r, v in zip(moves["after"], moves["variant"])]]
        if not moves.empty
        else moves
    )
    steps = tuple(transitions.steps(compared, moves))
    # The products' uses too: the main device's, made and used there; those of a set whose latest install failed
    # are left out with its cells (completeness.superseded).
    device = by_device.main(everything)
    uses = tuple(
        product_uses.judge(p, completeness.superseded(by_device.on(loaded.products[p.name], device), lacking,
                                                      release="torch_version"))
        for p in PRODUCTS
    )  # fmt: skip
    loads = uses[0].table  # the saved programs' (PRODUCTS[0]), which the verdicts read
    comparison = since.compare(cells, moves, base[0], base[1]) if base is not None else None
    labels = tables.environment_labels(cells) if not cells.empty else pd.Series(dtype=object)
    summary = tables.summary(cells)
    disagreements = tables.mode_disagreements(cells)
    verdicts = judged.judge(
        released,
        released_moves,
        loaded.environments,
        loads,
        compared=[(step.before, step.after) for step in steps],
        baseline=comparison,
        baseline_name=baseline_name,
        known_releases=known_releases,
        # Labels of the whole table: an environment is named alike on every page, whatever was left out.
        names=judged.environment_names(cells) if not cells.empty else None,
    )
    figures = headline.of(moves, verdicts.regressions.open_count)
    figures_since = _figures_since(base, base_figures, comparison, moves, figures, lacking)
    if verdicts.baseline is not None:
        verdicts = dataclasses.replace(verdicts, baseline=dataclasses.replace(verdicts.baseline, figures=figures_since))
    return Model(
        cells=cells,
        labels=labels,
        environments=loaded.environments,
        env_errors=loaded.env_errors,
        moves=moves,
        graph_diffs=diffs,
        steps=steps,
        summary=summary,
        pass_rates=pass_rates(summary),
        disagreements=disagreements,
        claims=tables.claims(cells),
        flaky=tables.flaky(cells),
        stage_failures=tables.stage_failures(cells),
        signatures=tables.signatures(cells),
        loads=loads,
        load_orders=uses[0].orders,
        verdicts=verdicts,
        runs=int((by_device.of(loaded.cells) == device).sum()),  # the main device's records
        warnings=loaded.warnings,
        baseline=comparison,
        baseline_name=baseline_name,
        repros=repro.failures(cells),
        scope=covered.of(cells, loaded.env_errors),
        incomplete=lacking,
        builds=compared_builds.compare(cells),
        candidates=candidate.judge(judged_cells, loads),
        uses=uses,
        known_issues=sightings(cells, [(u.product.stage, u.product.name, u.table) for u in uses]),
        upgrades=upgrade_answer.Upgrades(released, *(u.table for u in uses)),
        promises=product_uses.verdicts(uses),
        elsewhere=elsewhere,
        devices=by_device.compare(cells, elsewhere),
        figures=figures,
        figures_since=figures_since,
    )


def _figures_since(
    base: Optional[Tuple[pd.DataFrame, Optional[pd.DataFrame]]],
    base_figures: Optional[Dict[str, int]],
    comparison: Optional[since.BaselineComparison],
    moves: pd.DataFrame,
    figures: Dict[str, int],
    lacking: Sequence[completeness.IncompleteBuild],
) -> Optional[headline.Since]:
    """How the headline figures moved since the baseline's, with the baseline's tables judged by today's rule."""
    if base is None or comparison is None or not base_figures:
        return None
    base_cells, base_moves = base
    rejudged = None
    if base_moves is not None and not base_cells.empty and "kind" in base_moves.columns:
        rejudged = open_regressions(completeness.complete(base_cells), base_moves).open_count
    incomplete = [(b.release, b.variant) for b in lacking]
    return headline.moved(base_figures, figures, comparison, base_moves, moves, incomplete, rejudged)


def _released(cells: pd.DataFrame) -> pd.DataFrame:
    """The cells of released builds: no candidate's."""
    if cells.empty:
        return cells
    return cells[[not candidate.is_candidate(r, v) for r, v in zip(cells["release"], cells["variant"])]]


def release_lists(loaded: store.Store, cells: pd.DataFrame) -> Dict[str, List[str]]:
    """Each variant's releases, including those that only have an env-error, which break its series."""
    found: Dict[str, Set[str]] = {}
    sources = ((cells, "release"), (loaded.env_errors, "torch_version"), (loaded.environments, "torch_version"))
    for frame, column in sources:
        if frame.empty:
            continue
        for variant, release in zip(frame["variant"], frame[column]):
            if isinstance(release, str):
                found.setdefault(str(variant), set()).add(release)
    return {variant: store.ordered(releases) for variant, releases in found.items()}


def environment_key(row: Dict[str, object]) -> Key:
    """The environment of a row of the cell or summary table."""
    with_set = row.get("with_set")
    return (str(row["release"]), str(row["variant"]), str(row["python"]), with_set if isinstance(with_set, str) else "")


def pass_rates(summary: pd.DataFrame) -> Tuple[PassRate, ...]:
    """One per row of a summary table (:func:`tables.summary`), in its order: report order, then mode."""
    if summary.empty:
        return ()
    labels = tables.environment_labels(summary)
    found = []
    for row, label in zip(summary.to_dict("records"), labels):
        judged_cells = sum(int(row.get(s) or 0) for s in APPLICABLE)
        found.append(
            PassRate(
                environment=environment_key(row),
                label=str(label),
                mode=str(row["mode"]),
                cells=int(row["cells"]),
                passed=int(row.get("pass") or 0),
                judged=judged_cells,
                rate=float(row["pass_rate"]),
                incomplete=bool(row.get(completeness.COLUMN) or False),
            )
        )
    return tuple(found)


def newest_pass_rate(rates: Sequence[PassRate]) -> Tuple[str, int, int]:
    """The newest environment's label, and its passing and judged cells over every mode ("" when none).

    Of the newest release's environments, the last one of torch alone (no ``--with`` set) stands for it.
    An incomplete build never does: the newest complete one stands instead.
    """
    rates = [r for r in rates if not r.incomplete]
    if not rates:
        return "", 0, 0
    keys = list(dict.fromkeys(r.environment for r in rates))
    newest = keys[-1]
    plain = [key for key in keys if key[0] == newest[0] and not key[3]]
    chosen = plain[-1] if plain else newest
    mine = [r for r in rates if r.environment == chosen]
    return mine[0].label, sum(r.passed for r in mine), sum(r.judged for r in mine)
