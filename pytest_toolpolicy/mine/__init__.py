"""Mining a repository's own history into instances (``toolpolicy mine``)."""
