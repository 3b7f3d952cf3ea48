"""The real lesson: its card and steps are lesson.toml, what the runtime serves spec.py, its page page.py."""
