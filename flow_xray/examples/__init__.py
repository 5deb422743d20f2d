"""Runnable examples of flow-xray; ``demo_agent`` powers ``flow-xray demo``."""
