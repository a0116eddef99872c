"""The WellPlay (PLAYER* / Questum) dataset format: reader and writer (shared/formats/wellplay.md)."""
from exporters.wellplay.reader import read_wellplay
from exporters.wellplay.writer import write_wellplay

__all__ = ["read_wellplay", "write_wellplay"]
