"""Resolution: matched pairs become entities, an id per record (:mod:`.cluster`)."""
