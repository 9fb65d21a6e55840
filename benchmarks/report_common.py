"""Helpers shared by the report scripts: loading result files and describing where they ran."""
import json


def load(paths):
    return [json.load(open(p)) for p in paths]


def ms(x):
    return f"{1e3 * x:.3f}"


def machine_line(r):
    m = r["machine"]
    line = (f"{m['device']}, backend {m['backend']} (concurrency {m['concurrency']}), "
            f"Kokkos {m['kokkos_version']}, {m['compiler']}, {m['date']}")
    if "copy_bandwidth_bytes_per_s" in r:
        line += f"; copy bandwidth {r['copy_bandwidth_bytes_per_s'] * 1e-9:.0f} GB/s"
    return line
