"""Fixtures for a live referee API on loopback (filled by the server work)."""
