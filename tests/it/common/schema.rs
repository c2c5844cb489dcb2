//! A PostgreSQL schema of a test's own, dropped at the end: the server processes it starts
//! keep their task tables there (through `search_path` in the connection URL), so that other
//! tests' instances on the same database neither see nor sweep its tasks.

use std::time::{SystemTime, UNIX_EPOCH};

pub struct Schema {
    name: String,
    /// The database URL as given (without the search path).
    base: String,
}

impl Schema {
    /// Creates a fresh schema in the database at `url` (`postgres://...`).
    pub async fn create(url: &str) -> Schema {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let name = format!("t_{}_{nanos}", std::process::id());
        exec(url, &format!("CREATE SCHEMA {name}")).await;
        Schema { name, base: url.to_owned() }
    }

    /// `url` with this schema first in the search path (`url` may point elsewhere than the
    /// database the schema was created in, e.g. at a relay in front of it).
    pub fn url(&self, url: &str) -> String {
        let mut u = reqwest::Url::parse(url).expect("a PostgreSQL URL");
        // Percent-encoded by hand: a form encoder writes the space as `+`, which libpq-style
        // URL parsing keeps as a plus sign.
        let options = format!("options=-c%20search_path%3D{}", self.name);
        let query = match u.query() {
            Some(q) if !q.is_empty() => format!("{q}&{options}"),
            _ => options,
        };
        u.set_query(Some(&query));
        u.to_string()
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        let (base, sql) = (self.base.clone(), format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name));
        // Dropped inside the test's runtime: a thread with a runtime of its own does the I/O.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
            runtime.block_on(exec(&base, &sql));
        })
        .join();
    }
}

async fn exec(url: &str, sql: &str) {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("PostgreSQL answers");
    let driver = tokio::spawn(connection);
    client.batch_execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    drop(client);
    let _ = driver.await;
}
