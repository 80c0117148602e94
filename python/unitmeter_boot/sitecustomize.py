# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""unitmeter's bootstrap for CPython: mark each call of the unit functions.

unitmeter puts this directory first on PYTHONPATH, so every Python process of the traced command
(workers started by spawn or forkserver included) imports it at start-up. It calls two native
marker functions, which unitmeter probes, at the entry and return of each unit function, and
nothing else of the program is touched:

- CPython 3.12+: ``sys.monitoring`` watches function starts and returns; every code object that
  is not a unit function is disabled after its first event, so the rest of the program runs
  uninstrumented. A raised exception ends the unit through ``PY_UNWIND``.
- CPython 3.6 to 3.11: the function is wrapped where it is defined, by an import hook for
  modules and, for ``__main__``, by a line trace of the main module's top level that stops as
  soon as the function has been defined and wrapped.

Each process also writes a report of its interpreter, BLAS and OpenMP pools and thread
variables into UNITMETER_PY_REPORT, which unitmeter merges into the hardware record. Whatever
fails here is reported on stderr once and never breaks the traced program. Written for 3.6+.
"""

import os
import sys

_unitmeter_markers = None  # the markers of this process, once the bootstrap has run
_THREAD_ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
_MAIN_NAMES = ("__main__", "__mp_main__")


def _warn(message):
    sys.stderr.write("unitmeter (python bootstrap): %s\n" % message)


def _parse_specs(text):
    """'0=fit;2=pkg.mod:Model.fit' -> [(0, None, 'fit'), (2, 'pkg.mod', 'Model.fit')]."""
    specs = []
    for item in text.split(";"):
        if not item:
            continue
        index, _, spec = item.partition("=")
        module, _, qualname = spec.rpartition(":")
        specs.append((int(index), module or None, qualname))
    return specs


def _module_paths(module, qualname):
    """Where a spec's object may be looked up: (module name, attribute path), longest module first.

    'pkg.mod:Model.fit' names one module; a dotted 'pkg.mod.Model.fit' may split at any dot, and
    the longest prefix the program has imported wins. A bare 'fit' names no module.
    """
    parts = [p for p in qualname.split(".") if p != "<locals>"]
    if module is not None:
        return [(module, parts)]
    return [(".".join(parts[:k]), parts[k:]) for k in range(len(parts) - 1, 0, -1)]


class _Target(object):
    """What a spec's name resolved to in this process.

    function: the object found (a functools.wraps wrapper included); code: the code object whose
    runs are the units (the innermost wrapped function's); holder and attr: where the name is
    bound; raw: the binding as found (a staticmethod or classmethod object, or the function);
    owner: the named class when the method is inherited from a base class, so that only calls on
    it (or its subclasses) count; nested: a function defined inside another one's body.
    """

    def __init__(self, function, code, holder, attr, raw, owner, nested):
        self.function, self.code = function, code
        self.holder, self.attr, self.raw = holder, attr, raw
        self.owner, self.nested = owner, nested
        self.defined_in = getattr(function, "__module__", None) if function is not None else None


_MISSING = object()


def _unwrap(function):
    """The innermost function behind functools.wraps wrappers (inspect.unwrap, without inspect)."""
    seen = set()
    while hasattr(function, "__wrapped__") and id(function) not in seen:
        seen.add(id(function))
        function = function.__wrapped__
    return function


def _lookup(holder, attr):
    """holder.attr as it is stored (a staticmethod stays one), and the class that stores it."""
    if isinstance(holder, type):
        for klass in holder.__mro__:
            if attr in klass.__dict__:
                return klass.__dict__[attr], klass
        return _MISSING, None
    return getattr(holder, "__dict__", {}).get(attr, _MISSING), holder


def _nested_code(code, parts):
    """The code object of a function defined in code's body, by the names of its nesting."""
    import types
    for part in parts:
        inner = [c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == part]
        if not inner:
            return None
        code = inner[0]
    return code


def _walk(module, parts):
    """The _Target that module's attribute path names, or None."""
    import types
    obj, holder, raw, owner = module, None, None, None
    for i, part in enumerate(parts):
        if isinstance(obj, types.FunctionType) and holder is not None:
            code = _nested_code(_unwrap(obj).__code__, parts[i:])
            if code is None:
                return None
            target = _Target(None, code, None, None, None, None, True)
            target.defined_in = obj.__module__
            return target
        raw, stored_by = _lookup(obj, part)
        if raw is _MISSING:
            return None
        holder = obj
        owner = obj if isinstance(obj, type) and stored_by is not obj else None
        obj = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
    function = _unwrap(obj)
    if holder is None or not isinstance(function, types.FunctionType):
        return None
    return _Target(obj, function.__code__, holder, parts[-1], raw, owner, False)


def _resolve(module, qualname):
    """The _Target of a spec that names a module, once the program has imported that module."""
    for name, parts in _module_paths(module, qualname):
        loaded = sys.modules.get(name)
        if loaded is not None and parts:
            target = _walk(loaded, parts)
            if target is not None:
                return target
    return None



def _take_resolved(pending):
    """Each (index, target) of the pending specs the program's imports now resolve, taken off
    the list: the specs not resolved yet stay for the next look."""
    for spec in list(pending):
        index, module, qualname = spec
        target = _resolve(module, qualname)
        if target is not None:
            pending.remove(spec)
            yield index, target

def _defined_names():
    """'module:qualname' of every function the imported modules define (classes' methods too)."""
    import types
    names = []
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or name == "sitecustomize":
            continue
        for value in list(getattr(module, "__dict__", {}).values()):
            if getattr(value, "__module__", None) != name:
                continue  # imported from elsewhere: named where it is defined
            if isinstance(value, types.FunctionType):
                names.append("%s:%s" % (name, value.__qualname__))
            elif isinstance(value, type):
                for member in list(value.__dict__.values()):
                    member = getattr(member, "__func__", member)
                    if isinstance(member, types.FunctionType):
                        names.append("%s:%s" % (name, member.__qualname__))
    return names


class _SpecReport(object):
    """What this process knows of each spec, for unitmeter to judge at the run's end.

    A file per process (PID.specs in UNITMETER_PY_REPORT): the specs it resolved and where
    their function is defined, why one cannot resolve, and, when a spec found nothing, every
    name it saw defined (unitmeter picks the closest). Written when a spec resolves and at exit,
    so a worker killed by its pool has said what it found.
    """

    def __init__(self, report_dir, specs):
        self.report_dir = report_dir
        self.specs = specs
        self.defined = {}  # spec index -> the module defining its function
        self.why = {}  # spec index -> why it cannot resolve here
        self.names = None

    def resolved(self, index, module):
        if self.defined.get(index) == module:
            return
        self.defined[index] = module
        self.why.pop(index, None)
        self.write()

    def cannot(self, index, why):
        if index not in self.defined and self.why.get(index) != why:
            self.why[index] = why
            self.write()

    def write(self):
        import json
        if not self.report_dir:
            return
        state = {"pid": os.getpid(), "program": sys.argv[0] if sys.argv else None,
                 "defined": dict((str(k), v) for k, v in self.defined.items()),
                 "why": dict((str(k), v) for k, v in self.why.items()), "names": self.names}
        path = os.path.join(self.report_dir, "%d.specs" % os.getpid())
        try:
            with open(path + ".tmp", "w") as out:
                json.dump(state, out)
            os.rename(path + ".tmp", path)
        except (OSError, ValueError) as exc:
            _warn("could not write the unit report: %s" % exc)

    def at_exit(self):
        """Last word: what resolves now, and the names defined when a spec found nothing."""
        unresolved = False
        for index, module, qualname in self.specs:
            if index in self.defined or index in self.why:
                continue
            target = _resolve(module, qualname)
            if target is None and module is None:
                target = _find_by_qualname(qualname)
            if target is not None:
                self.defined[index] = target.defined_in
            else:
                unresolved = True
        if unresolved:
            self.names = _defined_names()
        self.write()


def _find_by_qualname(qualname):
    """A bare name's function in any imported module (what 'python:fit' matches), or None."""
    import types
    parts = qualname.split(".")
    for name, module in list(sys.modules.items()):
        if isinstance(module, types.ModuleType) and name != "sitecustomize":
            target = _walk(module, parts)
            if target is not None and target.function is not None and \
                    target.function.__qualname__ == qualname:
                return target
    return None


class _Markers(object):
    """The two native markers, and the once-per-process report of the target's facts."""

    def __init__(self, library, report_dir):
        import ctypes
        lib = ctypes.CDLL(library)
        self.begin = lib.unitmeter_unit_begin
        self.end = lib.unitmeter_unit_end
        self.begin.argtypes = self.end.argtypes = [ctypes.c_int]
        self.begin.restype = self.end.restype = None
        self.report_dir = report_dir
        self.reported_pid = None

    def unit_end(self, spec):
        self.end(spec)
        # after a first fit the numerical libraries are loaded: report them once per process
        if self.report_dir and self.reported_pid != os.getpid():
            self.reported_pid = os.getpid()
            try:
                _write_report(self.report_dir)
            except Exception as exc:  # diagnostic capture must never break a run
                _warn("could not write the interpreter report: %s" % exc)


def _blas_pools():
    """BLAS/OpenMP libraries mapped into this process, with versions and thread counts."""
    import ctypes
    import re
    kinds = (("openblas", "openblas", "openblas_get_num_threads"),
             ("mkl", "mkl_rt", "MKL_Get_Max_Threads"),
             ("blis", "blis", "bli_thread_get_num_threads"),
             ("libgomp", "gomp", "omp_get_max_threads"),
             ("libomp", "libomp", "omp_get_max_threads"),
             ("libiomp", "iomp5", "omp_get_max_threads"),
             # the reference BLAS/LAPACK (Debian's default alternative): single-threaded
             ("netlib-blas", "libblas.so", None),
             ("netlib-lapack", "liblapack.so", None))
    pools, seen = [], set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            base = os.path.basename(path)
            if not path.startswith("/") or path in seen or ".so" not in base:
                continue
            for backend, stem, threads_fn in kinds:
                # Debian maps OpenBLAS as .../openblas-pthread/libblas.so.3: look at the path
                where = path.lower() if backend in ("openblas", "mkl", "blis") else base.lower()
                if backend in ("netlib-blas", "netlib-lapack"):
                    matches = base.startswith(stem) and not any(
                        k in path.lower() for k in ("openblas", "mkl", "blis"))
                else:
                    matches = stem in where
                if not matches:
                    continue
                seen.add(path)
                version = None
                match = (re.search(r"(\d+\.\d+(?:\.\d+)?)", base.split(".so")[0]) or
                         re.search(r"\.so\.(\d+\.\d+(?:\.\d+)?)$", base))
                if match:
                    version = match.group(1)
                num_threads = None
                try:
                    if threads_fn is None:
                        raise AttributeError(threads_fn)
                    lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 4) | ctypes.RTLD_GLOBAL)
                    fn = getattr(lib, threads_fn)
                    fn.restype = ctypes.c_int
                    num_threads = int(fn())
                    if backend == "openblas" and version is None:
                        config = lib.openblas_get_config
                        config.restype = ctypes.c_char_p
                        found = re.search(rb"OpenBLAS (\d+\.\d+\.\d+)", config() or b"")
                        version = found.group(1).decode() if found else None
                except (OSError, AttributeError):
                    pass
                pools.append({"backend": backend, "path": path, "version": version,
                              "num_threads": num_threads})
                break
    return pools


def _write_report(report_dir):
    import json
    report = {
        "pid": os.getpid(),
        # what platform.python_version() and python_implementation() say, without importing
        # platform (~10 ms, in a process that may live a fraction of a second)
        "python_version": sys.version.split()[0],
        "implementation": "CPython" if sys.implementation.name == "cpython" else sys.implementation.name,
        "executable": sys.executable,
        "blas": _blas_pools(),
        "thread_env": dict((var, os.environ.get(var)) for var in _THREAD_ENV_VARS),
    }
    path = os.path.join(report_dir, "%d.json" % os.getpid())
    with open(path + ".tmp", "w") as out:
        json.dump(report, out)
    os.rename(path + ".tmp", path)


def _called_on(owner, code, frame):
    """An inherited method's call counts when its self (or cls) is the named class's."""
    if owner is None:
        return True
    if not code.co_argcount:
        return False
    first = frame.f_locals.get(code.co_varnames[0])
    return isinstance(first, owner) or (isinstance(first, type) and issubclass(first, owner))


def _plain_qualname(qualname):
    """A qualname without its '<locals>' steps: how 'outer.inner' names a nested function."""
    return qualname.replace("<locals>.", "").replace(".<locals>", "")


def _install_monitoring(specs, markers, report):
    """3.12+: events on the unit functions' code objects only."""
    mon = sys.monitoring
    tool = None
    for candidate in (4, 3, 5, 2):  # ids 0-2 belong to debuggers, coverage and profilers
        if mon.get_tool(candidate) is None:
            tool = candidate
            break
    if tool is None:
        _warn("every sys.monitoring tool id is taken: python units will not be seen")
        return
    mon.use_tool_id(tool, "unitmeter")
    events = mon.events
    unit_of = {}  # code object -> spec index, or -1 for code that is not a unit
    owner_of = {}  # code object -> the class an inherited method was named on
    by_name = [(index, _plain_qualname(qualname)) for index, module, qualname in specs
               if module is None]
    # specs naming a module: resolved to their code object once the program has imported it
    pending = [spec for spec in specs if spec[1] is not None or "." in spec[2]]
    seen_modules = [-1]

    def resolve_pending(force=False):
        # the program imports: the modules a pending spec names may be there now
        if not pending or (not force and len(sys.modules) == seen_modules[0]):
            return
        seen_modules[0] = len(sys.modules)
        for index, target in _take_resolved(pending):
            report.resolved(index, target.defined_in)
            owner_of[target.code] = target.owner
            if unit_of.get(target.code, -1) != index:
                disabled = unit_of.get(target.code) == -1
                unit_of[target.code] = index
                if disabled:
                    mon.restart_events()  # it ran before it was known: its events are back

    def spec_for(code):
        spec = unit_of.get(code)
        if spec is not None:
            return spec
        resolve_pending()
        spec = unit_of.get(code)
        if spec is not None:
            return spec
        spec = -1
        qualname = _plain_qualname(code.co_qualname)
        for index, wanted in by_name:
            if qualname == wanted:
                spec = index
                report.resolved(index, sys._getframe(2).f_globals.get("__name__"))
                break
        unit_of[code] = spec
        return spec

    def on_start(code, offset):
        spec = spec_for(code)
        if spec < 0:
            return mon.DISABLE
        if _called_on(owner_of.get(code), code, sys._getframe(1)):
            markers.begin(spec)

    def on_return(code, offset, value):
        spec = unit_of.get(code, -1)
        if spec < 0:
            return mon.DISABLE
        if _called_on(owner_of.get(code), code, sys._getframe(1)):
            markers.unit_end(spec)

    def on_unwind(code, offset, exception):
        spec = unit_of.get(code, -1)
        if spec >= 0 and _called_on(owner_of.get(code), code, sys._getframe(1)):
            markers.unit_end(spec)

    if pending:
        # a module finishes its import before anything outside it can call its functions
        hooked = [name for index, module, qualname in pending
                  for name, parts in _module_paths(module, qualname)]
        _install_import_hook(lambda module: resolve_pending(force=True), hooked)
    mon.register_callback(tool, events.PY_START, on_start)
    mon.register_callback(tool, events.PY_RETURN, on_return)
    mon.register_callback(tool, events.PY_UNWIND, on_unwind)
    mon.set_events(tool, events.PY_START | events.PY_RETURN | events.PY_UNWIND)


def _wrap(function, spec):
    """The unit function, called between the markers.

    The wrapper finds the markers at call time through sys.modules instead of closing over
    them: cloudpickle (joblib's loky) pickles __main__ functions by value, closure included, and
    ctypes objects cannot be pickled. A process without the bootstrap just runs the function.
    """
    import functools
    if getattr(function, "__unitmeter_unit__", False):
        return function

    @functools.wraps(function)
    def unit(*args, **kwargs):
        markers = getattr(sys.modules.get("sitecustomize"), "_unitmeter_markers", None)
        if markers is None:
            return function(*args, **kwargs)
        markers.begin(spec)
        try:
            return function(*args, **kwargs)
        finally:
            markers.unit_end(spec)

    unit.__unitmeter_unit__ = True
    return unit


def _wrap_in(namespace_get, namespace_set, owner_module, qualname, spec, markers):
    """Wrap qualname ('f' or 'Class.f') found through a namespace; True when it was found."""
    import types
    parts = qualname.split(".")
    holder = None
    target = namespace_get(parts[0])
    for part in parts[1:]:
        holder = target
        target = getattr(target, "__dict__", {}).get(part)
    if target is None:
        return False
    raw = target
    if isinstance(raw, (staticmethod, classmethod)):
        target = raw.__func__
    if not isinstance(target, types.FunctionType) or target.__qualname__ != qualname:
        return False
    if target.__module__ != owner_module and not (
            owner_module in _MAIN_NAMES and target.__module__ in _MAIN_NAMES):
        return False  # a re-export: the defining module's binding is the one to wrap
    wrapped = _wrap(target, spec)
    if isinstance(raw, (staticmethod, classmethod)):
        wrapped = type(raw)(wrapped)
    if holder is None:
        namespace_set(parts[0], wrapped)
    else:
        setattr(holder, parts[-1], wrapped)
    return True


_NESTED_WHY = ("a nested function is made anew at each call of the function around it, and "
               "Python 3.6-3.11 units wrap functions where they are bound: it is seen from "
               "Python 3.12 on")


def _wrap_closure(function, spec):
    """A functools.wraps wrapper: the function it wraps, swapped in its closure; True if done.

    Every binding of the wrapper then calls the unit, as sys.monitoring sees the inner code on
    3.12+. Cells are writable from 3.7; a C wrapper (lru_cache) has none.
    """
    inner = function.__wrapped__
    for cell in getattr(function, "__closure__", None) or ():
        try:
            if cell.cell_contents is inner:
                cell.cell_contents = _wrap(inner, spec)
                return True
        except (ValueError, AttributeError):
            continue
    return False


def _wrap_target(target, spec):
    """Wrap a resolved function where the program will call it; the reason when it cannot be."""
    if target.nested:
        return _NESTED_WHY
    function = target.function
    if hasattr(function, "__wrapped__") and _wrap_closure(function, spec):
        return None
    wrapped = _wrap(function, spec)
    if isinstance(target.raw, (staticmethod, classmethod)):
        wrapped = type(target.raw)(wrapped)
    # a class is shared by all its names; a module function is bound in each module that has it
    setattr(target.holder, target.attr, wrapped)
    home = sys.modules.get(getattr(function, "__module__", None))
    name = getattr(function, "__name__", None)
    if home is not None and home is not target.holder and \
            getattr(home, "__dict__", {}).get(name) is function:
        setattr(home, name, wrapped)
    return None


def _install_wrapping(specs, markers, report):
    """3.6-3.11: wrap each unit function in the module that defines it."""
    pending_main = [s for s in specs if s[1] is None or s[1] in _MAIN_NAMES]
    wanted = [s for s in specs if s[1] is None]
    # a module's name (pkg:Class.f, or dotted pkg.Class.f): resolved once that module is imported
    by_object = [s for s in specs if (s[1] is not None and s[1] not in _MAIN_NAMES) or
                 (s[1] is None and "." in s[2])]

    import types

    def resolve_by_object():
        found = False
        for index, target in _take_resolved(by_object):
            why = _wrap_target(target, index)
            if why:
                report.cannot(index, why)
            else:
                report.resolved(index, target.defined_in)
                found = True
        return found

    def scan_module(module):
        if not isinstance(module, types.ModuleType):
            return False  # sys.modules may hold other objects; they define no functions
        name = getattr(module, "__name__", None)
        found = False
        for index, mod, qualname in wanted:
            ns = module.__dict__
            if _wrap_in(ns.get, ns.__setitem__, name, qualname, index, markers):
                report.resolved(index, name)
                found = True
        return resolve_by_object() or found

    hooked = [None] if wanted else []
    for index, module, qualname in by_object:
        hooked.extend(name for name, parts in _module_paths(module, qualname))
    if hooked:
        _install_import_hook(scan_module, hooked)

    if not pending_main:
        return
    remaining = list(pending_main)
    import builtins
    builtin_import = builtins.__import__

    def stop_tracing():
        sys.settrace(None)  # every unit function is wrapped: the program runs untraced
        if builtins.__import__ is untraced_import:
            builtins.__import__ = builtin_import

    def untraced_import(*args, **kwargs):
        # An import runs other modules' code, never the main module's top level: tracing each
        # of its calls is what the trace would cost (scikit-learn's import: ~1 s of ~3).
        tracer = sys.gettrace()
        if tracer is None:
            return builtin_import(*args, **kwargs)
        sys.settrace(None)
        try:
            return builtin_import(*args, **kwargs)
        finally:
            # the main module's frame keeps its line tracer; global tracing brings it back
            if remaining:
                sys.settrace(tracer)

    def main_lines(frame, event, arg):
        ns = frame.f_globals
        for spec in list(remaining):
            index, _, qualname = spec
            if _wrap_in(ns.get, ns.__setitem__, ns.get("__name__"), qualname, index, markers):
                report.resolved(index, ns.get("__name__"))
                remaining.remove(spec)
        if not remaining:
            stop_tracing()
            return None
        return main_lines

    def on_call(frame, event, arg):
        # only the main module's top level is traced, line by line, until the defs have run
        if frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") in _MAIN_NAMES:
            return main_lines
        return None

    builtins.__import__ = untraced_import
    sys.settrace(on_call)


def _install_import_hook(scan_module, modules):
    """After each module of interest is executed, wrap its unit functions."""

    any_module = None in modules

    # sys.meta_path takes any object with find_spec; importlib.abc would cost ~30 ms of start-up
    class Finder(object):
        def find_spec(self, fullname, path, target=None):
            if not any_module and fullname not in modules:
                return None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
            else:
                return None
            loader = spec.loader
            if loader is None or not hasattr(loader, "exec_module"):
                return spec
            exec_module = loader.exec_module

            def exec_and_wrap(module):
                exec_module(module)
                scan_module(module)

            try:
                loader.exec_module = exec_and_wrap
            except (AttributeError, TypeError):
                pass  # a loader that cannot be patched: its modules stay unwrapped
            return spec

    sys.meta_path.insert(0, Finder())
    for module in list(sys.modules.values()):  # already imported before the bootstrap ran
        if module is not None and (any_module or getattr(module, "__name__", None) in modules):
            scan_module(module)


def _chain_sitecustomize():
    """Run the sitecustomize this one hides (Debian ships one), if there is one on the path."""
    import types
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        directory = os.path.abspath(entry or ".")
        candidate = os.path.join(directory, "sitecustomize.py")
        if directory != here and os.path.isfile(candidate):
            # run as a module of its own (importlib.util would cost ~5 ms of start-up)
            module = types.ModuleType("_unitmeter_chained_sitecustomize")
            module.__file__ = candidate
            with open(candidate, "rb") as source:
                code = compile(source.read(), candidate, "exec")
            exec(code, module.__dict__)
            return


def _bootstrap():
    specs_text = os.environ.get("UNITMETER_PY_UNITS")
    library = os.environ.get("UNITMETER_MARKER_LIB")
    if not specs_text or not library:
        return
    try:
        specs = _parse_specs(specs_text)
        markers = _Markers(library, os.environ.get("UNITMETER_PY_REPORT"))
        global _unitmeter_markers
        _unitmeter_markers = markers
        report = _SpecReport(os.environ.get("UNITMETER_PY_REPORT"), specs)
        import atexit
        atexit.register(report.at_exit)
        if sys.version_info >= (3, 12):
            _install_monitoring(specs, markers, report)
        else:
            _install_wrapping(specs, markers, report)
    except Exception as exc:  # the traced program must run even if the bootstrap cannot
        _warn("python units are off in process %d: %s" % (os.getpid(), exc))


_bootstrap()
try:
    _chain_sitecustomize()
except Exception as exc:
    _warn("the program's own sitecustomize failed: %s" % exc)
