"""No import cycle among the project's modules (issue 27), lazy imports counted.

Every ``import``/``from ... import`` anywhere in a module of ``shared/`` or ``services/`` is an
edge (inside functions and under ``if TYPE_CHECKING:`` too: a cycle hidden in a function is
still a circle a reader has to untangle, and the first refactor that hoists the import turns it
into an ImportError). ``from pkg import name`` is an import of ``pkg.name`` when that is a
module, else of ``pkg``; imports from outside the project are ignored. The strongly connected
components of that graph are the cycles.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from tests.unit.test_rings import all_imports


def module_graph(imports: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """Module -> the project modules it imports. An imported dotted name stands for the
    longest prefix of it that is a project module (``from a.b import c``: ``a.b.c`` when that
    is a module, else ``a.b``; ``import a.b.c``: ``a.b.c``)."""
    modules = set(imports)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, names in imports.items():
        for name in names:
            target = name
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target:
                graph[mod].add(target)
    return graph


def cycles(graph: Mapping[str, Iterable[str]]) -> list[set[str]]:
    """The strongly connected components that are cycles (two or more modules, or one that
    imports itself), by Tarjan's algorithm, iteratively (no recursion limit to mind)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[set[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        # Each frame: a node and the iterator over its successors still to visit.
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.get(node, ()):
                    found.append(component)
    return found


def _project_cycles() -> list[set[str]]:
    return cycles(module_graph(all_imports("shared", "services")))


def test_the_detector_finds_cycles_through_lazy_relative_and_from_imports() -> None:
    from tests.unit.test_rings import imports_of

    sources = {
        # a -> b by a function-level relative import of a module
        "pkg.a": "def f():\n    from . import b\n",
        # b -> c by importing a name that is no module (counts as the module itself)
        "pkg.b": "from pkg.c import helper\n",
        # c -> a under TYPE_CHECKING: the circle a -> b -> c -> a
        "pkg.c": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n",
        # d -> d: a module importing itself
        "pkg.d": "import pkg.d\nimport os\n",
        # e -> a only: reaches the circle without being in it
        "pkg.e": "from pkg import a\n",
        "pkg": "",
    }
    imports = {
        name: imports_of(src, name, is_package=name == "pkg") for name, src in sources.items()
    }
    graph = module_graph(imports)
    assert graph["pkg.b"] == {"pkg.c"} and graph["pkg.e"] == {"pkg.a"}
    assert graph["pkg.d"] == {"pkg.d"}  # os is not the project's
    assert sorted(map(sorted, cycles(graph))) == [["pkg.a", "pkg.b", "pkg.c"], ["pkg.d"]]
    # Without the lazy import the circle is gone, and so is the finding.
    del imports["pkg.a"][:]
    assert cycles(module_graph(imports)) == [{"pkg.d"}]


def test_no_import_cycle_among_the_services() -> None:
    bad = [sorted(c) for c in _project_cycles() if any(m.startswith("services") for m in c)]
    assert not bad, f"import cycles among services/ modules: {bad}"


def test_no_import_cycle_in_shared() -> None:
    # The application ring's knot (handlers, play-outs, queries, registered bots, searches,
    # tournaments and the audit, issue 27) was untied by handlers by capability and a pure
    # decide path: none may come back.
    knotted = [sorted(c) for c in _project_cycles() if any(m.startswith("shared") for m in c)]
    assert not knotted, f"import cycles among shared/ modules: {knotted}"
