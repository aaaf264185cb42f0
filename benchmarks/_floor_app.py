"""The floor of bench_service.py: uvicorn + Starlette with one endpoint that reads the upload and stores nothing.

    python benchmarks/_floor_app.py PORT

Same HTTP protocol and event loop as ``dptopic serve`` (:func:`dptopic.service.http.server_options`), one process.
"""
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from dptopic.service.http import server_options


async def post_reports(request: Request):
    body = await request.body()
    return JSONResponse({"stored": 1, "bytes": len(body)}, 201)


async def healthz(request: Request):
    return JSONResponse({"ok": True})


app = Starlette(routes=[Route("/v1/reports", post_reports, methods=["POST"]), Route("/healthz", healthz)])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False, **server_options())
