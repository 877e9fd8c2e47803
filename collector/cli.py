"""The ``aitrail`` command: collect, verify, catalog, keygen, analyze, export, extract, report.

Exit codes: 0 all good; 1 verification failed or no bundle could be produced;
2 usage error; 3 collected with failures (partial).
"""

from __future__ import annotations

import gc
import importlib
import os
import sys

import click

from aitrail.collector import __version__, frozen


class LazyGroup(click.Group):
    """Loads each subcommand's module only when that command runs.

    So the collector never imports the analyzer, and ``aitrail analyze`` does
    not pay for the collector's planner, walker and catalog (a fifth of a
    second of imports, more than a small bundle's whole analysis).
    """

    lazy = {"collect": ("aitrail.collector.collect_cli", "collect"),
            "verify": ("aitrail.collector.verify.cli", "verify"),
            "keygen": ("aitrail.collector.verify.cli", "keygen"),
            "catalog": ("aitrail.collector.catalog.cli", "catalog_group"),
            "import": ("aitrail.collector.foreign.cli", "import_command"),
            "analyze": ("aitrail.analyzer.cli", "analyze"), "export": ("aitrail.analyzer.outputs.cli", "export"),
            "extract": ("aitrail.analyzer.outputs.cli", "extract"), "report": ("aitrail.analyzer.report.cli", "report")}
    # Short help of the lazy commands, for `aitrail --help` (a test keeps it equal to the command's own).
    lazy_help = {"collect": "Collect every store the catalog names into one sealed evidence bundle.",
                 "verify": "Re-hash every member and check manifests, index and signature.",
                 "keygen": "Create an Ed25519 key pair for signing bundles.",
                 "catalog": "Inspect and validate the agent catalog.",
                 "import": "Seal another collector's container as an aitrail bundle (docs/importing.md).",
                 "analyze": "Turn a verified bundle into one timeline (17 columns; see docs/timeline.md).",
                 "export": "Write a verified bundle for other forensic tools (bodyfile, dissect).",
                 "extract": ("Write a verified bundle's collected files under their subject paths, with modes and "
                             "times."),
                 "report": "Write one self-contained HTML report of verified bundles (see docs/report.md)."}
    ran: str | None = None  # the subcommand this process ran (``run`` reads it)

    # workstation commands of the collector's own modules, left out of the frozen build with the analyzer's:
    # an import reads another tool's container on the examiner's workstation, never on a subject
    workstation_only = frozenset({"import"})

    @classmethod
    def analyzer_commands(cls) -> frozenset[str]:
        """The commands whose module is the analyzer's: the frozen, collector-only build has none of them."""
        return frozenset(name for name, (module, _) in cls.lazy.items() if module.startswith("aitrail.analyzer."))

    @classmethod
    def not_frozen(cls) -> frozenset[str]:
        """The commands a frozen, collector-only build does not offer (the analyzer's and the workstation's)."""
        return cls.analyzer_commands() | cls.workstation_only

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the subcommands for --help without importing the lazy ones."""
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy:
                rows.append((name, self.lazy_help[name]))
                continue
            command = super().get_command(ctx, name)
            if command is not None and not command.hidden:
                width = formatter.width - 6 - max(map(len, self.commands), default=0)
                rows.append((name, command.get_short_help_str(width)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
        if frozen.running_frozen():
            formatter.write_paragraph()
            formatter.write_text(f"{', '.join(sorted(self.not_frozen()))}: {frozen.COLLECTOR_ONLY}.")

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every subcommand's name, without importing the analyzer (and without its commands in a frozen build)."""
        hidden = self.not_frozen() if frozen.running_frozen() else frozenset()
        return sorted(name for name in [*super().list_commands(ctx), *self.lazy] if name not in hidden)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """As click resolves it; the name is kept for ``run``."""
        name, command, rest = super().resolve_command(ctx, args)
        self.ran = name
        return name, command, rest

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        """The subcommand ``name``, imported only when it runs; an analyzer command in a frozen build says why not."""
        if name in self.not_frozen() and frozen.running_frozen():
            raise click.UsageError(f"{name}: {frozen.COLLECTOR_ONLY}", ctx)
        if name in self.lazy:
            module_name, attribute = self.lazy[name]
            try:
                module = importlib.import_module(module_name)
            except ImportError as exc:
                raise click.ClickException(f"the {name} command is not available here: {exc}") from exc
            return getattr(module, attribute)
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="aitrail")
def main() -> None:
    """Collect, verify and analyze what AI coding agents leave on disk."""


# Commands that, when they end with status 0, have closed and flushed everything they wrote: after them
# the process may end without the interpreter's teardown (``run``). An analysis loads the most to tear down.
END_QUICKLY_AFTER = frozenset({"analyze"})
YOUNG_GC_THRESHOLD = 50_000  # allocations between collections of the youngest generation (as collect's)
_exit = os._exit  # how run() ends the process quickly (a test replaces it here, not in os: forks use os._exit)


def run() -> None:
    """The ``aitrail`` program: ``main``, then, after a command of END_QUICKLY_AFTER, an end without the teardown.

    Python's teardown of the modules and objects an analysis loaded takes
    about 30 ms, a bare interpreter's 8 (docs/performance.md, fifth round).
    When such a command ends with status 0, the process ends by
    ``os._exit(0)`` once stdout and stderr are flushed. Any other ending (an
    error status, a traceback, a flush that fails, another command) is
    Python's own. While the command runs, the youngest generation of the
    cyclic garbage collector is collected every YOUNG_GC_THRESHOLD
    allocations, not 700.
    """
    thresholds = gc.get_threshold()
    # importing the commands' modules and opening a bundle makes hundreds of thousands of objects and
    # almost no cycles: at the default threshold the collector ran 32 times before an analysis forked its
    # workers (7 ms of its serial start) to free 343 objects; reference counting frees the rest
    gc.set_threshold(max(thresholds[0], YOUNG_GC_THRESHOLD), *thresholds[1:])
    main.ran = None  # this run's command only: never one an earlier call in this process resolved
    try:
        main()
    except SystemExit as exc:
        if main.ran not in END_QUICKLY_AFTER or not (exc.code is None or exc.code == 0):
            raise
        try:
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:  # None: a process started without them
                    stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: Python's own ending reports it
            raise exc from None
        _exit(0)
    finally:
        gc.set_threshold(*thresholds)


if __name__ == "__main__":  # python -m aitrail.collector.cli
    run()
