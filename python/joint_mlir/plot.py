"""``python -m joint_mlir.plot``: see :mod:`joint_mlir.cli.plot`."""
from .cli.plot import main
if __name__ == "__main__":
    raise SystemExit(main())
