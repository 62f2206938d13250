-- Least privilege for the warehouse: a role that can read the clinical tables and
-- nothing else. Each warehouse transaction runs `SET LOCAL ROLE clarion_warehouse`,
-- so a statement that reached the warehouse cannot read users, sessions, tokens or
-- history even if something upstream went wrong.
--
-- Roles belong to the whole PostgreSQL cluster. Creating one needs CREATEROLE; where
-- Clarion's login lacks it, each step is skipped with a notice and the warehouse logs
-- that it reads with the login's own privileges (see README, "Security").
DO $$
BEGIN
    BEGIN
        CREATE ROLE clarion_warehouse NOLOGIN;
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'role clarion_warehouse not created: %', SQLERRM;
    END;
    BEGIN
        GRANT SELECT ON clinics, clinicians, patients, wounds, assessments TO clarion_warehouse;
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'clarion_warehouse was not granted the clinical tables: %', SQLERRM;
    END;
    BEGIN
        GRANT clarion_warehouse TO CURRENT_USER;
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'clarion_warehouse was not granted to %: %', CURRENT_USER, SQLERRM;
    END;
END
$$;
