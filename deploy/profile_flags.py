"""A Streamlit settings file as `streamlit run` flags, one word per line (deploy/class-server.sh).

    python deploy/profile_flags.py .streamlit/production.toml
    --server.fileWatcherType
    none
    --server.allowedHosts          (a list: one flag per item; Streamlit collects them)
    localhost
    ...

Flags override every config file a worker reads (its .streamlit/config.toml is the local profile),
so the class server's workers run with these settings wherever they start.
"""

from __future__ import annotations

import sys
import tomllib


def flags(profile: dict) -> list[str]:
    words = []
    for section, options in profile.items():
        for key, value in options.items():
            for item in value if isinstance(value, list) else [value]:
                text = str(item).lower() if isinstance(item, bool) else str(item)
                if isinstance(item, dict) or "\n" in text:
                    raise ValueError(f"{section}.{key}: only plain values, or lists of them, can be flags")
                words += [f"--{section}.{key}", text]
    return words


if __name__ == "__main__":
    try:
        with open(sys.argv[1], "rb") as file:
            print("\n".join(flags(tomllib.load(file))))
    except (OSError, ValueError, IndexError) as problem:
        sys.exit(f"profile_flags: {problem}")
