"""The web pages: leaderboards, lists of tournaments and matches, bots, live
tournaments, and matches on their card table, live and replayed; and a
person's own seat at the table (server/web/people.py), signed in with a
session cookie (server/web/sessions.py).

Server-rendered Jinja2 (autoescaped: bot names are user input), plain CSS and
one small vanilla script that only adds what needs a browser — stepping a
replay with the keyboard, following a running match or tournament by its
event stream (server-sent events: nothing polls). Every page's static content
is there without JavaScript, and every page has a JSON twin in the REST API
(named in each view's docstring). Any path outside the API that is not a page
answers an HTML error page.

`server.app` registers this package through `register(app)` when it exists.
"""

from __future__ import annotations

from flask import Blueprint, Flask

bp = Blueprint("web", __name__, template_folder="templates", static_folder="static",
               static_url_path="/web/static")


def register(app: Flask) -> None:
    from server.errors import PAGE_ERRORS
    from server.web import pages, people  # noqa: F401 (importing them attaches the views to bp)
    from server.web.cards import face, suit_of_key
    from server.web.sessions import blp as sessions

    app.register_blueprint(bp)
    app.register_blueprint(sessions)
    app.extensions[PAGE_ERRORS] = pages.page_error  # an unknown page is an HTML 404 too
    app.jinja_env.globals.update(card_face=face, suit_face=suit_of_key)
    # `tojson` keeps the keys in their order (Jinja sorts them by default): an action in a page's
    # data is then its JSON exactly as the referee listed it
    app.jinja_env.policies["json.dumps_kwargs"] = {"sort_keys": False}
