"""``python -m joint_mlir.run`` (see :mod:`joint_mlir.cli.run`); import that
module, not this one, which would shadow the function ``joint_mlir.run``."""
from .cli.run import main
if __name__ == "__main__":
    raise SystemExit(main())
