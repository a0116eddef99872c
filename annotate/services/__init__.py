"""Plain logic of the annotation app (no request objects): views stay thin and call these."""
