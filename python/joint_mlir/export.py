"""``python -m joint_mlir.export``: see :mod:`joint_mlir.cli.export`."""
from .cli.export import main
if __name__ == "__main__":
    raise SystemExit(main())
