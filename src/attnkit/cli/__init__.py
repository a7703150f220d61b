"""The command line: a thin layer over the Python API, one small module per subcommand.

``entry`` is the console script. It lives here, importing nothing at module level, so that Ctrl-C at
any moment after Python itself has started, while the CLI's modules are still being imported included,
exits 130 with one line instead of a traceback (``interrupts``: never in the middle of an import).
"""


def entry() -> None:
    import sys

    try:
        from .interrupts import install

        install()  # a Ctrl-C during an import is raised once the import is done (see there)
        from .main import entry as run

        run()
    except KeyboardInterrupt:
        import signal

        from .interrupts import disarm

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        disarm()
        print("attnkit: interrupted", file=sys.stderr)
        sys.exit(130)
