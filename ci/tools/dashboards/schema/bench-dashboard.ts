// The shapes dashboards/*.json must have: Grafana's published types (npm @grafana/schema, the v1
// dashboard JSON model and each core panel's options), read the way JSON carries them. Used by
// ci/tools/dashboards/schema_check.py, which type-checks every dashboard with the TypeScript compiler.
//
// Two readings that concern JSON, not the schema:
//  - Json<T>: a TypeScript string enum accepts only its members, while JSON holds their values
//    ("table", not LegendDisplayMode.Table); an enum is read as the union of its values.
//  - Loose<T> (panel options, custom field config): every key optional, since Grafana lays saved
//    options over the panel's defaults; an unknown key or a wrong value is still an error.
// One addition to the schema, for what it leaves to each datasource: a Prometheus annotation keeps
// its query in `target` (expr, interval) and its display keys (titleFormat, textFormat, tagKeys,
// useValueForTime) on the annotation, which is where Grafana's Prometheus datasource reads them.
import type { AnnotationQuery, Dashboard, DataQuery } from '@grafana/schema';
import type * as BarChart from '@grafana/schema/dist/esm/raw/composable/barchart/panelcfg/x/BarChartPanelCfg_types.gen';
import type * as Stat from '@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen';
import type * as Table from '@grafana/schema/dist/esm/raw/composable/table/panelcfg/x/TablePanelCfg_types.gen';
import type * as TimeSeries from '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';

type Scalar<T> = T extends string ? (string extends T ? string : `${T}`) : T;

export type Json<T> =
  0 extends (1 & T) ? T :
  unknown extends T ? T :
  T extends string | number | boolean | null | undefined ? Scalar<T> :
  T extends ReadonlyArray<infer U> ? Array<Json<U>> :
  { [K in keyof T]: Json<T[K]> };

export type Loose<T> =
  0 extends (1 & T) ? T :
  unknown extends T ? T :
  T extends string | number | boolean | null | undefined ? Scalar<T> :
  T extends ReadonlyArray<infer U> ? Array<Loose<U>> :
  { [K in keyof T]?: Loose<T[K]> };

type PrometheusAnnotation = Omit<Json<AnnotationQuery>, 'target'> & {
  target: Json<DataQuery> & { expr: string; interval?: string };
  titleFormat?: string;
  textFormat?: string;
  tagKeys?: string;
  useValueForTime?: boolean;
};

export type BenchDashboard = Json<Omit<Dashboard, 'annotations'>> & {
  annotations?: { list?: Array<Json<AnnotationQuery> | PrometheusAnnotation> };
};

// Panel type -> its options and its custom field config, as Grafana's panel plugins declare them.
export type PanelOptions = {
  timeseries: Loose<TimeSeries.Options>;
  stat: Loose<Stat.Options>;
  table: Loose<Table.Options>;
  barchart: Loose<BarChart.Options>;
};
export type PanelCustom = {
  timeseries: Loose<TimeSeries.FieldConfig>;
  table: Loose<Table.FieldConfig>;
  barchart: Loose<BarChart.FieldConfig>;
};
