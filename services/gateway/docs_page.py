"""``/docs``: the interactive API documentation (Swagger UI), every script and style served by
this server from the ``swagger-ui-bundle`` package, so it works with no other host."""

from __future__ import annotations

from flask import Blueprint, Response, send_from_directory

docs = Blueprint("docs", __name__)

PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>tabletop API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="api"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script>
    window.ui = SwaggerUIBundle({
      url: "/openapi.json",
      dom_id: "#api",
      deepLinking: true,
      presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
      layout: "StandaloneLayout",
    });
  </script>
</body>
</html>
"""


def _assets() -> str:
    import swagger_ui_bundle

    path: str = swagger_ui_bundle.swagger_ui_path
    return path


@docs.get("/docs")
def page() -> Response:
    """The documentation page."""
    return Response(PAGE, mimetype="text/html")


@docs.get("/docs/assets/<path:name>")
def asset(name: str) -> Response:
    """Swagger UI's scripts and styles, from the installed package."""
    return send_from_directory(_assets(), name, max_age=3600)
