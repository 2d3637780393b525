"""The static product page: :mod:`.release` loads and re-verifies the published files,
:mod:`.evidence` assigns each figure its evidence state, :mod:`.page` renders the page and its
in-browser verifier (``templates/``)."""
