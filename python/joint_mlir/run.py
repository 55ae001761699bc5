"""``python -m joint_mlir.run``: run (and compare) joint-graph training steps.

The implementation lives in :mod:`joint_mlir.runner`. ``joint_mlir.run`` is
also the function :func:`joint_mlir.runner.run`; importing this submodule
would otherwise replace that package attribute with the module, so the
module is made callable and forwards to the function.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from .runner import main, run

__all__ = ["main", "run"]


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return run(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

if __name__ == "__main__":
    sys.exit(main())
