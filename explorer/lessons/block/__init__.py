"""The block lesson: its card and steps are lesson.toml, what the runtime serves spec.py, its page block.py."""
