"""``Server.Analysis.AITrail``: verify and analyze a collected bundle on the Velociraptor server.

Given a client and the flow of a ``Generic.Collection.AITrail`` collection,
the artifact copies the flow's uploaded bundle and sidecar out of the file
store (``uploads()`` + ``copy(accessor="fs")``, as the exchange's
``Server.Analysis.Windows.EventLogs.Hayabusa`` stages its uploads,
``Velocidex/velociraptor-docs@336a715``), compares the sidecar with the
bundle's SHA-256, runs ``aitrail verify`` and then ``aitrail analyze
--format jsonl`` with argv arrays, uploads the timeline and returns its
lines through ``parse_jsonl()``: every timeline row is a result row with the
stable column set of docs/timeline.md (17 columns, then host, case_id and
bundle_sha256), which is what ``Elastic.Flows.Upload`` and the other
forwarders need.

It needs the full aitrail (``pip install aitrail``) on the server: the
frozen collector the client artifact runs has no analyzer.
"""

from __future__ import annotations

from aitrail.collector.catalog.export import yamltext
from aitrail.collector.catalog.export.plan import ExportPlan
from aitrail.collector.catalog.export.velociraptor import BUNDLE, CLIENT_NAME

SERVER_NAME = "Server.Analysis.AITrail"
TIMELINE = "timeline.jsonl"

_SERVER_QUERY = """LET _CheckArgs <= if(condition=NOT ClientId OR NOT FlowId,
    then=log(message="ClientId and FlowId are required parameters", level="ERROR"))

LET Staging <= tempdir()
LET Bundle <= path_join(components=[Staging, "@BUNDLE@"])
LET Sidecar <= Bundle + ".sha256"
LET Timeline <= path_join(components=[Staging, "@TIMELINE@"])
LET KeyArgs <= if(condition=PublicKey, then=["--public-key", PublicKey, "--require-signature"], else=[])

-- The flow's bundle and sidecar, copied out of the file store (the fs accessor decompresses).
LET Uploaded <= SELECT vfs_path,
                       basename(path=client_path || format(format="%v", args=vfs_path)) AS BaseName
  FROM uploads(client_id=ClientId, flow_id=FlowId)
  WHERE NOT Type = "idx"
LET Staged <= SELECT BaseName,
                     copy(filename=vfs_path, accessor="fs",
                          dest=path_join(components=[Staging, BaseName])) AS StagedPath
  FROM Uploaded
  WHERE BaseName =~ '''^@BUNDLE_RE@(\\.sha256)?$'''
LET HaveBundle <= stat(filename=Bundle)
LET _CheckBundle <= if(condition=NOT HaveBundle,
    then=log(message="flow %v of %v uploaded no @BUNDLE@", args=[FlowId, ClientId], level="ERROR"))

-- The transport leg: the sidecar the collector wrote names the digest of the bundle received.
LET BundleSha256 <= hash(path=Bundle, hashselect="SHA256").SHA256
LET SidecarText <= read_file(filename=Sidecar, length=1024)
LET _CheckSidecar <= if(condition=HaveBundle AND NOT SidecarText =~ ("^" + BundleSha256 + "  "),
    then=log(message="the bundle's SHA-256 %v is not the one its sidecar names: %v", args=[BundleSha256, SidecarText],
             level="ERROR"))

LET Verified <= SELECT ReturnCode, Stdout, Stderr FROM if(condition=HaveBundle, then={
    SELECT * FROM execve(argv=[AITrail, "verify", Bundle, "--quiet"] + KeyArgs, length=10000000)
    WHERE Complete
  })
LET VerifyOK <= Verified[0].ReturnCode = 0
LET _CheckVerify <= if(condition=HaveBundle AND NOT VerifyOK,
    then=log(message="aitrail verify refused the bundle: %v %v", args=[Verified[0].Stdout, Verified[0].Stderr],
             level="ERROR"))

LET Analyzed <= SELECT ReturnCode, Stderr FROM if(condition=VerifyOK, then={
    SELECT * FROM execve(argv=[AITrail, "analyze", Bundle, "--format", "jsonl", "-o", Timeline, "--quiet"] + KeyArgs,
                         length=10000000)
    WHERE Complete
  })
LET AnalyzeOK <= VerifyOK AND Analyzed[0].ReturnCode = 0
LET _CheckAnalyze <= if(condition=VerifyOK AND NOT AnalyzeOK,
    then=log(message="aitrail analyze failed: %v", args=[Analyzed[0].Stderr], level="ERROR"))
LET _Upload <= if(condition=AnalyzeOK, then=upload(file=Timeline, name="aitrail-@TIMELINE@"))

SELECT * FROM if(condition=AnalyzeOK, then={
    SELECT * FROM parse_jsonl(filename=Timeline)
  })
"""


def server_artifact(plan: ExportPlan) -> str:
    """``Server.Analysis.AITrail.yaml``: stage a flow's bundle, verify it, return its timeline rows."""
    description = f"""Verify and analyze the aitrail bundle a {CLIENT_NAME} flow uploaded; the rows are its timeline.

Copies `{BUNDLE}` and its `.sha256` sidecar out of the flow's uploads into a temporary directory, checks the
bundle's SHA-256 against the sidecar, runs `aitrail verify` (with `--public-key KEY --require-signature`
when PublicKey is given) and, when the bundle is valid, `aitrail analyze --format jsonl`. Each timeline line
becomes a result row (17 columns, then host, case_id and bundle_sha256: docs/timeline.md); the JSONL is
also uploaded as `aitrail-{TIMELINE}`. A bundle that fails verification is named in the flow's log as an
error and gives no rows.

Needs the full aitrail on the server (`pip install aitrail`): the frozen collector has no analyzer.
Run it per flow (`collect_client(client_id="server", artifacts="{SERVER_NAME}", env=dict(...))`) or from
a notebook after a hunt.

Generated by aitrail {plan.version} from catalog sha256:{plan.digest}.
"""
    query = (_SERVER_QUERY.replace("@BUNDLE_RE@", BUNDLE.replace(".", "\\."))
             .replace("@BUNDLE@", BUNDLE).replace("@TIMELINE@", TIMELINE))
    document = {
        "name": SERVER_NAME,
        "author": "aitrail catalog export",
        "description": description,
        "type": "SERVER",
        "required_permissions": ["EXECVE", "FILESYSTEM_WRITE", "READ_RESULTS"],
        "resources": {"timeout": 3600},
        "parameters": [
            {"name": "ClientId", "description": "The client the collection ran on."},
            {"name": "FlowId", "description": f"The flow of the {CLIENT_NAME} collection."},
            {"name": "PublicKey",
             "description": "Optional trusted signer: the sha256:<hex> fingerprint collect printed, or a PEM "
                            "public key. When given the bundle must be signed by it."},
            {"name": "AITrail", "default": "aitrail",
             "description": "The aitrail command on the server (a path, or a name on the server's PATH)."},
        ],
        "sources": [{"query": query}],
    }
    return plan.header("velociraptor") + yamltext.dump(document)
