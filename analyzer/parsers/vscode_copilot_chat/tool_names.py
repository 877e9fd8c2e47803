"""The two names of a Copilot tool: the one the model calls, and the id VS Code records on the part.

Copilot offers its own tools to the model under ``ToolName`` (``read_file``) and
invokes them under ``ContributedToolName`` (``copilot_readFile``): the model's call in
``toolCallRounds`` carries the first, the ``toolInvocationSerialized`` part's
``toolId`` the second (toolsService.ts: ``getToolName(tool.name)`` for the model,
``vscode.lm.invokeTool(getContributedToolName(name), ...)`` to run it). Every other
tool (VS Code's own ``run_in_terminal``, MCP and extension tools) has one name.

The pairs below are every ``ToolName`` / ``ContributedToolName`` of the same key in
the history of microsoft/vscode-copilot-chat src/extension/tools/common/toolNames.ts
(af813ee4, 2025-06-27, to 797f0c96, 2026-03-20); a later release's new tool is not
here, and two names nothing here ties are not taken for one tool.
"""

from __future__ import annotations

from aitrail.analyzer.formats.vscode_chat import same_name

_PAIRS = """
apply_patch copilot_applyPatch; ask_questions copilot_askQuestions; create_and_run_task copilot_createAndRunTask
create_directory copilot_createDirectory; create_file copilot_createFile
create_new_jupyter_notebook copilot_createNewJupyterNotebook; create_new_workspace copilot_createNewWorkspace
edit_files copilot_editFiles; edit_notebook_file copilot_editNotebook; fetch_webpage copilot_fetchWebPage
file_search copilot_findFiles; get_changed_files copilot_getChangedFiles; get_doc_info copilot_getDocInfo
get_errors copilot_getErrors; get_project_setup_info copilot_getProjectSetupInfo
get_search_view_results copilot_getSearchResults; get_task_output copilot_getTaskOutput
get_terminal_last_command copilot_getTerminalLastCommand; get_terminal_output copilot_getTerminalOutput
get_terminal_selection copilot_getTerminalSelection; get_vscode_api copilot_getVSCodeAPI
github_repo copilot_githubRepo; grep_search copilot_findTextInFiles; insert_edit_into_file copilot_insertEdit
install_extension copilot_installExtension; list_code_usages copilot_listCodeUsages; list_dir copilot_listDirectory
memory copilot_memory; multi_replace_string_in_file copilot_multiReplaceString
open_integrated_browser copilot_openIntegratedBrowser; open_simple_browser copilot_openSimpleBrowser
read_file copilot_readFile; read_notebook_cell_output copilot_readNotebookCellOutput
read_project_structure copilot_readProjectStructure; replace_string_in_file copilot_replaceString
resolve_memory_file_uri copilot_resolveMemoryFileUri; run_in_terminal copilot_runInTerminal
run_notebook_cell copilot_runNotebookCell; run_tests copilot_runTests; run_tests copilot_runTests1
run_tests1 copilot_runTests1; run_vs_code_task copilot_runVsCodeTask; run_vscode_command copilot_runVscodeCommand
search_workspace_symbols copilot_searchWorkspaceSymbols; semantic_search copilot_searchCodebase
switch_agent copilot_switchAgent; test_failure copilot_testFailure; test_search copilot_findTestFiles
think copilot_think; tool_replay copilot_toolReplay; update_user_preferences copilot_updateUserPreferences
view_image copilot_viewImage
"""
CONTRIBUTED = frozenset(tuple(pair.split()) for line in _PAIRS.strip().splitlines() for pair in line.split(";"))


def same_tool(call_name: str, tool_id: str) -> bool:
    """Whether a model call's name and an invocation part's ``toolId`` name one tool.

    Equal names, a side that names none, or a Copilot tool's model name and its
    contributed id (``read_file`` and ``copilot_readFile``).
    """
    return same_name(call_name, tool_id) or (call_name, tool_id) in CONTRIBUTED
