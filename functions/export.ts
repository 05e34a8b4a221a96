/**
 * PLACEHOLDER, made by the infrastructure part of issue 22 so that the stack synthesizes: the
 * export's engineer replaces this file with the hourly Parquet export.
 */
export async function handler(): Promise<{ exported: number }> {
  return { exported: 0 };
}
