"""tackroom: drive every coding-agent CLI through one interface, and prove what it configured was used.

The public API is what ``__all__`` lists; everything else may change. Names are
imported on first use, so ``import tackroom`` does no work.

::

    import tackroom

    result = tackroom.run("claude-code", "Say hello", mock_text="Hello from the mock model")
    print(result.ok, result.final_text, result.usage.input)
"""

from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType

TYPE_CHECKING = False  # not typing's: importing typing costs the quickest commands ~20 ms
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "Adapter": "tackroom.adapters.resolve",
    "AdapterSet": "tackroom.adapters.resolve",
    "load_adapters": "tackroom.adapters.resolve",
    "Endpoint": "tackroom.adapters.plan",
    "Plan": "tackroom.adapters.plan",
    "plan_run": "tackroom.adapters.plan",
    "run": "tackroom.run.runner",
    "arun": "tackroom.run.runner",
    "Result": "tackroom.run.result",
    "Event": "tackroom.trace.events",
    "SessionStarted": "tackroom.trace.events",
    "AssistantText": "tackroom.trace.events",
    "ToolCall": "tackroom.trace.events",
    "ToolResult": "tackroom.trace.events",
    "UsageReport": "tackroom.trace.events",
    "ErrorEvent": "tackroom.trace.events",
    "Finished": "tackroom.trace.events",
    "Usage": "tackroom.trace.events",
    "UserText": "tackroom.trace.events",
    "Record": "tackroom.trace.events",
    "read_trace": "tackroom.trace.api",
    "usage": "tackroom.trace.api",
    "list_sessions": "tackroom.trace.api",
    "scan_traces": "tackroom.trace.api",
    "SessionInfo": "tackroom.trace.api",
    "Trace": "tackroom.trace.model",
    "TraceEvent": "tackroom.trace.model",
    "SessionMeta": "tackroom.trace.model",
    "TraceIssue": "tackroom.trace.model",
    "TraceError": "tackroom.errors",
    "MockServer": "tackroom.mock",
    "Script": "tackroom.mock",
    "Turn": "tackroom.mock",
    "Profile": "tackroom.profile.model",
    "load_profile": "tackroom.profile.load",
    "TackroomError": "tackroom.errors",
    "CellError": "tackroom.errors",
    "HostError": "tackroom.errors",
    "ConfigError": "tackroom.errors",
    "ProfileError": "tackroom.errors",
    "UnsafePathError": "tackroom.errors",
    "TrustError": "tackroom.errors",
    "UntrustedProjectError": "tackroom.errors",
    "OptionError": "tackroom.errors",
    "UnsupportedOptionError": "tackroom.errors",
    "TemplateError": "tackroom.errors",
    "UnknownAdapterError": "tackroom.errors",
    "FamilyError": "tackroom.errors",
    "InstallError": "tackroom.errors",
    "RegistryError": "tackroom.errors",
    "HarnessNotFoundError": "tackroom.errors",
    "HarnessVersionError": "tackroom.errors",
    "MockError": "tackroom.errors",
    "MockScriptError": "tackroom.errors",
    "RunError": "tackroom.errors",
    "RunSpecError": "tackroom.errors",
    "LaunchError": "tackroom.errors",
    "SandboxError": "tackroom.errors",
    "RunSpec": "tackroom.run.spec",
    "ProbeError": "tackroom.errors",
    "RowError": "tackroom.errors",
    "StateError": "tackroom.errors",
    "GatewayError": "tackroom.errors",
    "StreamLineError": "tackroom.errors",
    "DetectionError": "tackroom.errors",
    "ConformanceError": "tackroom.errors",
    "detect": "tackroom.detect",
    "Detection": "tackroom.detect",
    "Gateway": "tackroom.gateway",
    "TaskError": "tackroom.errors",
    "MatrixError": "tackroom.errors",
    "EvaluationExistsError": "tackroom.errors",
    "RayUnavailableError": "tackroom.errors",
    "ResidentError": "tackroom.errors",
    "Task": "tackroom.eval.tasks",
    "load_task": "tackroom.eval.tasks",
    "Cell": "tackroom.eval.cell",
    "CellResult": "tackroom.eval.cell",
    "Matrix": "tackroom.eval.matrix",
    "load_matrix": "tackroom.eval.matrix",
    "evaluate": "tackroom.eval.evaluate",
}

__all__ = [
    "Adapter",
    "AdapterSet",
    "AssistantText",
    "Cell",
    "CellError",
    "CellResult",
    "ConfigError",
    "ConformanceError",
    "Detection",
    "DetectionError",
    "Endpoint",
    "ErrorEvent",
    "EvaluationExistsError",
    "Event",
    "FamilyError",
    "Finished",
    "Gateway",
    "GatewayError",
    "HarnessNotFoundError",
    "HarnessVersionError",
    "HostError",
    "InstallError",
    "LaunchError",
    "Matrix",
    "MatrixError",
    "MockError",
    "MockScriptError",
    "MockServer",
    "OptionError",
    "Plan",
    "ProbeError",
    "Profile",
    "ProfileError",
    "RayUnavailableError",
    "Record",
    "RegistryError",
    "ResidentError",
    "Result",
    "RowError",
    "RunError",
    "RunSpec",
    "RunSpecError",
    "SandboxError",
    "Script",
    "SessionInfo",
    "SessionMeta",
    "SessionStarted",
    "StateError",
    "StreamLineError",
    "TackroomError",
    "Task",
    "TaskError",
    "TemplateError",
    "ToolCall",
    "ToolResult",
    "Trace",
    "TraceError",
    "TraceEvent",
    "TraceIssue",
    "TrustError",
    "Turn",
    "UnknownAdapterError",
    "UnsafePathError",
    "UnsupportedOptionError",
    "UntrustedProjectError",
    "Usage",
    "UsageReport",
    "UserText",
    "__version__",
    "arun",
    "detect",
    "evaluate",
    "list_sessions",
    "load_adapters",
    "load_matrix",
    "load_profile",
    "load_task",
    "plan_run",
    "read_trace",
    "run",
    "scan_traces",
    "usage",
]

if TYPE_CHECKING:
    from tackroom.adapters.plan import Endpoint, Plan, plan_run
    from tackroom.adapters.resolve import Adapter, AdapterSet, load_adapters
    from tackroom.detect import Detection, detect
    from tackroom.errors import (
        ConfigError,
        ConformanceError,
        DetectionError,
        EvaluationExistsError,
        FamilyError,
        GatewayError,
        HarnessNotFoundError,
        HarnessVersionError,
        InstallError,
        LaunchError,
        MatrixError,
        MockError,
        MockScriptError,
        OptionError,
        ProbeError,
        ProfileError,
        RayUnavailableError,
        RegistryError,
        ResidentError,
        RowError,
        RunError,
        RunSpecError,
        SandboxError,
        StateError,
        StreamLineError,
        TackroomError,
        TaskError,
        TemplateError,
        TraceError,
        TrustError,
        UnknownAdapterError,
        UnsafePathError,
        UnsupportedOptionError,
        UntrustedProjectError,
    )
    from tackroom.eval.cell import Cell, CellResult
    from tackroom.eval.evaluate import evaluate
    from tackroom.eval.matrix import Matrix, load_matrix
    from tackroom.eval.tasks import Task, load_task
    from tackroom.gateway import Gateway
    from tackroom.mock import MockServer, Script, Turn
    from tackroom.profile.load import load_profile
    from tackroom.profile.model import Profile
    from tackroom.run.result import Result
    from tackroom.run.runner import arun, run
    from tackroom.run.spec import RunSpec
    from tackroom.trace.api import SessionInfo, list_sessions, read_trace, usage
    from tackroom.trace.api import scan as scan_traces
    from tackroom.trace.events import (
        AssistantText,
        ErrorEvent,
        Event,
        Finished,
        Record,
        SessionStarted,
        ToolCall,
        ToolResult,
        Usage,
        UsageReport,
        UserText,
    )
    from tackroom.trace.model import SessionMeta, Trace, TraceEvent, TraceIssue


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tackroom' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # the next access finds it, not the same-named submodule
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(ModuleType):
    """``tackroom.run`` and ``tackroom.detect`` stay the functions once their submodules load.

    Importing ``tackroom.run.runner`` would otherwise bind the package ``tackroom.run`` over the
    function of that name (the import system sets each submodule on its parent).
    """

    def __setattr__(self, name: str, value: object) -> None:
        if name in _EXPORTS and isinstance(value, ModuleType):
            return  # the submodule is still sys.modules["tackroom.<name>"]
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
