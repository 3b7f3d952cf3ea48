"""RESULTS.md's sections for the server-side phases: interaction latency, the class's load (one process
and the class server) and live training under load; and the helpers report.py shares with them (a
phase's result, a number as printed).  Every number comes from the results dictionary.
"""

from __future__ import annotations


def fmt(value, digits: int = 0) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def phase_result(data: dict, phase: str) -> dict | None:
    entry = data.get("phases", {}).get(phase)
    if not entry:
        return None
    return entry["result"]


def server_memory(load: dict) -> dict:
    """The server's memory over the run: PSS summed over its processes (older runs: RSS of one)."""
    return load.get("server_memory_mb") or load["server_rss_mb"]


def server_name(load: dict) -> str:
    server = load.get("server", "")
    if server.startswith("class-server"):
        return "class-server.sh"
    return "serve.py" if server.startswith("serve.py") else "one process"


def latency_section(data: dict) -> list[str]:
    latency = phase_result(data, "latency")
    if not latency:
        return []
    if "error" in latency:
        return ["## Interaction latency", "", f"Failed: {latency['error']}", ""]
    first = next((c for c in latency["cases"] if "error" not in c), None)
    gap = first["paced"]["gap_s"] if first else 0
    reps = (first["paced"]["page"]["n"], first["back_to_back"]["page"]["n"]) if first else (0, 0)
    out = [
        "## Interaction latency (server side, websocket client)",
        "",
        "Rerun request written → `script_finished` read, over loopback, TCP_NODELAY on the client. Page and floor",
        "reruns interleaved in the same loop. No client message cache, so every rerun carries the whole page",
        f"(what a control change that redraws every figure costs). **Paced** ({reps[0]} reruns): a {gap} s pause "
        "before each, as between a user's actions; the targets are evaluated on these. **Back to back** "
        f"({reps[1]} reruns): as while a slider is dragged; includes Streamlit's TCP stall (see *TCP_NODELAY*).",
        "",
        "| page | setting | p50 | p95 | floor p50 | floor p95 | ratio p50 | ratio p95 | back to back p50 / p95 | "
        "floor back to back p50 | KB / rerun | largest message KB | figures |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case in latency["cases"]:
        if "error" in case:
            out.append(f"| {case['page']} | {case['setting']} | failed: {case['error'][:80]} ||||||||||| |")
            continue
        b, p = case["back_to_back"], case["paced"]
        figures = ", ".join(f"{v} {k}" for k, v in case["output"].items() if k in ("plotly", "vega", "dataframe"))
        out.append(
            f"| {case['page']} | {case['setting']} | {p['page']['p50_ms']:.0f} | **{p['page']['p95_ms']:.0f}** | "
            f"{p['floor']['p50_ms']:.0f} | {p['floor']['p95_ms']:.0f} | **{p['ratio_p50']:.2f}** | "
            f"{p['ratio_p95']:.2f} | "
            f"{b['page']['p50_ms']:.0f} / {b['page']['p95_ms']:.0f} | {b['floor']['p50_ms']:.0f} | "
            f"{case['bytes_per_rerun'] / 1024:.0f} | {case.get('largest_message_bytes', 0) / 1024:.0f} | "
            f"{figures or '–'} |")
    out += ["", "Times in ms. The *largest* settings, found by the bounded search (every slider at its maximum, "
            "then each choice set to its slowest option), as links:", ""]
    for case in latency["cases"]:
        if case["setting"] == "largest":
            notes = " — **the page showed a note:** " + " ".join(case["notes_shown"])[:200] if case.get(
                "notes_shown") else ""
            out.append(f"- {case['page']}: `?{case['query']}`{notes}")
    for name, search in latency.get("searches", {}).items():
        if search.get("log"):
            out.append(f"  - search on {name}: " + "; ".join(search["log"]))
    out.append("")
    return out


def load_section(data: dict, phase: str = "load", title: str = "Classroom load") -> list[str]:
    load = phase_result(data, phase)
    if not load:
        return []
    if "error" in load:
        return [f"## {title}", "", f"Failed: {load['error']}", ""]
    memory = server_memory(load)
    lat = load["latency"]
    pss = "server_memory_mb" in load
    measure = f"PSS summed over its {load.get('server_processes', 1)} process(es)" if pss else "RSS"
    out = [
        f"## {title}",
        "",
        f"Server: {load.get('server', 'one streamlit run process')}. {load['sessions']} concurrent sessions spread "
        f"over the pages, each changing a random control every ~{load['interval_s']:.0f} s for "
        f"{load['duration_s']:.0f} s ({load['warmed_up']}); browser-like message cache on.",
        "",
        f"- reruns: {load['reruns']} ({load['reruns_per_s']} per second), errors: **{load['errors']}**"
        + (f" (e.g. {load['error_examples'][:3]})" if load["errors"] else "")
        + f"; error boxes shown by pages: {load['error_boxes_shown']}",
        f"- latency: p50 {lat['p50_ms']:.0f} ms, p95 **{lat['p95_ms']:.0f} ms**, p99 {load['latency_p99_ms']:.0f} ms, "
        f"max {lat['max_ms']:.0f} ms; first visits p50 {load['first_visits']['p50_ms']:.0f} ms",
        *([f"- to the key figure (request → the main area's first chart read; the rest of the run follows it): "
           f"p50 {load['first_chart']['p50_ms']:.0f} ms, p95 **{load['first_chart']['p95_ms']:.0f} ms**"]
          if load.get("first_chart", {}).get("n") else []),
        f"- server memory ({measure}): {memory['before']:.0f} MB before, max **{memory['max']:.0f} MB**, "
        f"first half max {memory['first_half_max']:.0f} MB, second half max {memory['second_half_max']:.0f} MB, "
        f"second-half slope **{memory['second_half_slope_mb_per_min']:+.1f} MB/min**, {memory['end']:.0f} MB at the end"
        + (f" (RSS summed: max {load['server_rss_mb']['max']:.0f} MB, shared pages counted once per process)"
           if pss else ""),
        *(["- PSS by process at the end: " + ", ".join(
            f"{kind} {mb:.0f} MB" for kind, mb in load["server_memory_by_process_mb_end"].items())]
          if load.get("server_memory_by_process_mb_end") else []),
        f"- server CPU: {load['server_cpu_share']} cores busy on average"
        + (f" (the load client: {load['client_cpu_share']})" if load.get("client_cpu_share") is not None else "")
        + f"; {load['bytes_per_rerun'] / 1024:.0f} KB per rerun",
        "",
        "| page | reruns | p50 ms | p95 ms | max ms |",
        "|---|---|---|---|---|",
    ]
    for page, s in load["per_page"].items():
        out.append(f"| {page} | {s['n']} | {fmt(s['p50_ms'])} | {fmt(s['p95_ms'])} | {fmt(s['max_ms'])} |")
    return [*out, ""]


def train_load_section(data: dict) -> list[str]:
    train = phase_result(data, "train-load")
    if not train:
        return []
    if "error" in train:
        return ["## A class presses Train", "", f"Failed: {train['error']}", ""]
    before, during, done = train["other_pages_before"], train["other_pages_during"], train["train_to_finished"]
    server = train.get("server", "one `streamlit run` process")
    shared = "one shared run per worker" if "workers" in server else "one shared run"
    out = [
        "## A class presses Train",
        "",
        f"{server[:1].upper() + server[1:]}. {train['others']} sessions use the other "
        "lessons (a control every ~2 s) "
        f"throughout; after {train['baseline_s']:.0f} s, {train['trainers']} sessions open the train page with the "
        f"same settings (`{train['train_query']}`), press Train and poll as the browser does until the finished run "
        "shows.",
        "",
        f"- trainers that saw the finished run: **{train['trainers_finished']} of {train['trainers']}**; Train to "
        f"finished run p50 {done['p50_ms'] / 1000:.1f} s, max {done['max_ms'] / 1000:.1f} s ({shared})",
        f"- the trainers' polls: {train['polls']['n']}, p50 {train['polls']['p50_ms']:.0f} ms, "
        f"p95 {train['polls']['p95_ms']:.0f} ms"
        + (f"; {train['bytes_per_poll']} bytes a fragment poll, {train['page_runs_asked_by_fragments']} page runs "
           "asked by the fragments (into the finished run, or to a slower pace)" if "bytes_per_poll" in train else ""),
        f"- the other pages: p95 **{during['p95_ms']:.0f} ms** while the class trained (p50 {during['p50_ms']:.0f} ms, "
        f"{during['n']} reruns) against {before['p95_ms']:.0f} ms before (p50 {before['p50_ms']:.0f} ms, "
        f"{before['n']} reruns)",
        f"- errors: **{train['errors']}**" + (f" (e.g. {train['error_examples'][:3]})" if train["errors"] else ""),
        f"- server memory (PSS, the training process included): {train['server_memory_mb']['before']:.0f} MB "
        f"before, max {train['server_memory_mb']['max']:.0f} MB; CPU (cores busy): "
        f"{train.get('server_cpu_share', {}).get('before')} before, {train.get('server_cpu_share', {}).get('during')} "
        "while training",
        "",
        "| page | p95 ms before | p95 ms while training |",
        "|---|---|---|",
    ]
    for page, s in train["per_page"].items():
        out.append(f"| {page} | {fmt(s['before']['p95_ms'])} | {fmt(s['during']['p95_ms'])} |")
    return [*out, ""]
