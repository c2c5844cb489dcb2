//! Each mistake fails `ServerBuilder::build` with an error naming the tool and the view.

mod common;

use common::{HTML, VIEW, apps, builder, view};
use switchyard::server::DynamicResource;
use switchyard::{BuildError, ReadResourceResult, ResourceContents};
use switchyard_apps::{AppView, Apps, Csp, Visibility};

/// The build's error, as one string per problem.
fn problems(apps: Apps) -> Vec<String> {
    problems_of(apps.install(builder()).build())
}

fn problems_of(built: Result<switchyard::Server, BuildError>) -> Vec<String> {
    match built {
        Ok(_) => panic!("the build should fail"),
        Err(e) => e.problems().iter().map(ToString::to_string).collect(),
    }
}

fn only(problems: Vec<String>) -> String {
    assert_eq!(problems.len(), 1, "{problems:#?}");
    problems.into_iter().next().unwrap_or_default()
}

#[test]
fn a_valid_configuration_builds() {
    assert!(apps().install(builder()).build().is_ok());
}

#[test]
fn a_tool_linked_to_a_missing_view() {
    let p = only(problems(Apps::new().view(view()).link_tool("roll", "ui://dice/missing", Visibility::ModelAndApp)));
    assert!(p.starts_with("tool `roll` at Apps::link_tool at "), "{p}");
    assert!(p.contains("build_checks.rs"), "the link's site: {p}");
    assert!(p.contains("`ui://dice/missing`, which is no resource of the server"), "{p}");
}

#[test]
fn a_link_naming_a_tool_the_server_lacks() {
    let p = only(problems(Apps::new().view(view()).link_tool("rol", VIEW, Visibility::AppOnly)));
    assert!(p.starts_with("tool `rol`"), "{p}");
    assert!(p.contains(&format!("is linked to the view `{VIEW}` but the server has no tool `rol`")), "{p}");
}

#[test]
fn a_view_uri_outside_the_ui_scheme() {
    let bad = AppView::html("https://dice/roller", "Dice", HTML);
    let p = only(problems(Apps::new().view(bad)));
    assert!(p.starts_with("resource `https://dice/roller` at AppView at "), "{p}");
    assert!(p.contains("`ui://` scheme"), "{p}");
}

#[test]
fn a_view_replaced_by_a_resource_of_another_mime_type() {
    let other = DynamicResource::new(VIEW, "impostor", |_ctx, req| async move {
        Ok(ReadResourceResult::new(vec![ResourceContents::text(req.uri, Some("text/html"), "<p>")]))
    })
    .mime_type("text/html");
    let built = apps().install(builder()).resource(other).build();
    let problems = problems_of(built);
    assert!(problems.iter().any(|p| p.starts_with(&format!("resource `{VIEW}` at AppView at "))
        && p.contains("served as `text/html`")), "{problems:#?}");
    // Each linked tool names the view it can no longer show.
    assert!(problems.iter().any(|p| p.starts_with("tool `roll`") && p.contains("served as `text/html`")));
}

#[test]
fn a_link_to_a_ui_resource_that_is_not_a_view() {
    let other = DynamicResource::new("ui://dice/text", "text", |_ctx, req| async move {
        Ok(ReadResourceResult::new(vec![ResourceContents::text(req.uri, Some("text/plain"), "4")]))
    })
    .mime_type("text/plain");
    let built = Apps::new()
        .link_tool("roll", "ui://dice/text", Visibility::ModelAndApp)
        .install(builder().resource(other))
        .build();
    let p = only(problems_of(built));
    assert!(p.starts_with("tool `roll`") && p.contains("`ui://dice/text`, which is served as `text/plain`"), "{p}");
}

#[test]
fn a_link_to_a_resource_view_declared_without_apps_builds() {
    // A view need not be an AppView: any static resource served as the MCP Apps MIME type works.
    let html = DynamicResource::new("ui://dice/own", "own", |_ctx, req| async move {
        Ok(ReadResourceResult::new(vec![ResourceContents::text(req.uri, Some(switchyard_apps::MIME_TYPE), HTML)]))
    })
    .mime_type(switchyard_apps::MIME_TYPE);
    let built = Apps::new()
        .link_tool("roll", "ui://dice/own", Visibility::ModelAndApp)
        .install(builder().resource(html))
        .build();
    assert!(built.is_ok(), "{:?}", built.err());
}

#[test]
fn csp_entries_that_are_not_origins() {
    let bad = view().csp(
        Csp::new()
            .connect_domains(["https://api.example.com/v1", "wss://live.example.com"])
            .resource_domains(["cdn.example.com", "wss://live.example.com"])
            .frame_domains(["https://www.youtube.com"])
            .base_uri_domains(["javascript://x"]),
    );
    let problems = problems(Apps::new().view(bad));
    assert_eq!(problems.len(), 4, "{problems:#?}");
    for (entry, says) in [
        ("connectDomains` entry \"https://api.example.com/v1\"", "drop the path"),
        ("resourceDomains` entry \"cdn.example.com\"", "no `scheme://`"),
        ("resourceDomains` entry \"wss://live.example.com\"", "scheme `wss`"),
        ("baseUriDomains` entry \"javascript://x\"", "scheme `javascript`"),
    ] {
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with(&format!("resource `{VIEW}`")) && p.contains(entry) && p.contains(says)),
            "{entry}: {problems:#?}"
        );
    }
}

#[test]
fn an_unreadable_view_file() {
    let missing = AppView::file("ui://dice/file", "Dice", "no/such/view.html");
    let p = only(problems(Apps::new().view(missing).link_tool("roll", "ui://dice/file", Visibility::ModelAndApp)));
    assert!(p.starts_with("resource `ui://dice/file`") && p.contains("no/such/view.html cannot be read"), "{p}");
}

#[test]
fn a_view_file_is_read_at_install() {
    let path = std::env::temp_dir().join(format!("switchyard-apps-view-{}.html", std::process::id()));
    std::fs::write(&path, HTML).expect("write");
    let built = Apps::new()
        .view(AppView::file("ui://dice/file", "Dice", &path))
        .link_tool("roll", "ui://dice/file", Visibility::ModelAndApp)
        .install(builder())
        .build();
    let _ = std::fs::remove_file(&path);
    let server = built.expect("builds");
    assert!(server.table().resource("ui://dice/file").is_some());
}

#[test]
fn duplicates_name_both_sites() {
    let problems =
        problems(apps().view(AppView::html(VIEW, "Again", HTML)).link_tool("roll", VIEW, Visibility::AppOnly));
    assert!(problems.iter().any(|p| p.starts_with(&format!("resource `{VIEW}` is registered twice: at AppView at "))));
    assert!(problems.iter().any(|p| p.starts_with("tool `roll (linked to a view)` is registered twice")));
}

#[test]
fn an_empty_domain() {
    let p = only(problems(Apps::new().view(view().domain(" "))));
    assert!(p.contains("`_meta.ui.domain` is empty"), "{p}");
}

#[test]
fn every_problem_at_once() {
    let problems = problems(Apps::new().view(AppView::html("file:///x.html", "x", HTML)).link_tool(
        "nope",
        "ui://none",
        Visibility::ModelAndApp,
    ));
    // The URI, the missing tool and the missing view.
    assert_eq!(problems.len(), 3, "{problems:#?}");
}
