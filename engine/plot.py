"""The regimes bar chart: KL by regime on a log scale, byte-equal entries annotated instead of drawn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.regimes import flat_entries


def plot_regimes(report: dict[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = flat_entries(report)
    labels = [label for label, _ in rows]
    nonzero = [e["kl_max"] for _, e in rows if e["kl_max"] > 0] + [e["kl_mean"] for _, e in rows if e["kl_mean"] > 0]
    floor = min(nonzero) / 10 if nonzero else 1e-12
    fig, ax = plt.subplots(figsize=(max(8, 0.7 * len(rows) + 3), 5.5))
    for x, (_, e) in enumerate(rows):
        if e["byte_equal"]:
            ax.plot([x], [floor * 1.15], marker="v", color="tab:green")
            ax.annotate("byte-equal\n(KL = 0)", (x, floor * 1.6), ha="center", va="bottom", fontsize=8,
                        color="tab:green", fontweight="bold")
            continue
        color = "tab:orange" if "control" in labels[x] else "tab:blue"
        ax.bar(x, max(e["kl_mean"], floor), color=color, alpha=0.85)
        ax.plot([x], [max(e["kl_max"], floor)], marker="_", markersize=18, color="black")
    ax.set_yscale("log")
    ax.set_ylim(bottom=floor)
    ax.set_xlim(-0.9, len(rows) - 0.1)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("KL(reference || candidate), nats (bar: mean, tick: max)")
    samples = rows[0][1]["samples"] if rows else 0
    ax.set_title(f"Positional regimes: {report['model']} ({samples} samples each), "
                 f"fingerprint {report['fingerprint'][:12]}")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
